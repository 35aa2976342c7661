// SPDX-License-Identifier: MIT
/*
 * The tc hooks (inj_int.h): a clsact qdisc and our program on a device's
 * ingress or egress, registered in the maps the program looks its hook up
 * in, removed when their last rule goes unless they were there before us;
 * and the hooks' tracing and tracking flags, with their counters.
 */
#include <net/if.h>
#include <signal.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "inj_int.h"

/*
 * The keys of the hooks map, read in one walk and used after it: updating
 * an element of a hash map puts a new one at the head of its bucket, so
 * an update during a get_next_key walk sent it round two keys of one
 * bucket for ever (an add spun holding the lock until the agent killed it
 * after 60 s; the map's hash seed is random, so it happened now and then:
 * CI t11). Never update while walking.
 */
int inj_hook_keys(int hfd, uint32_t keys[INJ_MAX_HOOKS])
{
	uint32_t key, next;
	int n = 0;

	while (n < INJ_MAX_HOOKS && !bpf_map_get_next_key(hfd, n ? &key : NULL, &next))
		keys[n++] = key = next;
	return n;
}

/*
 * A hook's entry written where the program looks (inject_abi.h): the hash
 * (user space's own record), the copy by slot, and the bucket when it is
 * free or already the hook's. flags: the hash update's (BPF_NOEXIST, ...).
 */
int inj_hook_put(struct inj_ctx *c, uint32_t hk, const struct inj_hook *hv, uint64_t flags)
{
	struct inject_bpf *s = inj_maps(c);
	struct inj_hook live = *hv;
	struct inj_hook_bucket b;
	uint32_t bi = hk & (INJ_HOOK_BUCKETS - 1), slot = hv->slot;
	int ifd = bpf_map__fd(s->maps.inj_hook_idx);

	if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_hooks), &hk, hv, flags))
		return -errno;
	live.flags |= INJ_HOOK_LIVE;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_hook_slots), &slot, &live, BPF_ANY))
		return -errno;
	if (!bpf_map_lookup_elem(ifd, &bi, &b) && (!b.key || (b.key == hk + 1 && b.slot != slot))) {
		/* one 8-byte value: the program reads it in one load */
		b.key = hk + 1;
		b.slot = slot;
		if (bpf_map_update_elem(ifd, &bi, &b, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* the hook gone from all three: the bucket first, so no packet finds a slot
 * another hook may take next */
static void hook_drop(struct inj_ctx *c, uint32_t hk)
{
	struct inject_bpf *s = inj_maps(c);
	struct inj_hook_bucket b, none = { 0 };
	struct inj_hook hv, empty = { 0 };
	uint32_t bi = hk & (INJ_HOOK_BUCKETS - 1);
	int ifd = bpf_map__fd(s->maps.inj_hook_idx), hfd = bpf_map__fd(s->maps.inj_hooks);

	if (!bpf_map_lookup_elem(ifd, &bi, &b) && b.key == hk + 1)
		bpf_map_update_elem(ifd, &bi, &none, BPF_ANY);
	if (!bpf_map_lookup_elem(hfd, &hk, &hv) && hv.slot < INJ_MAX_HOOKS)
		bpf_map_update_elem(bpf_map__fd(s->maps.inj_hook_slots), &hv.slot, &empty,
				    BPF_ANY);
	bpf_map_delete_elem(hfd, &hk);
}

uint32_t inj_owned_get(struct inj_ctx *c, uint32_t ifindex)
{
	uint32_t v = 0;

	bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_owned), &ifindex, &v);
	return v;
}

int inj_owned_set(struct inj_ctx *c, uint32_t ifindex, uint32_t v)
{
	int fd = bpf_map__fd(inj_maps(c)->maps.inj_owned);

	return bpf_map_update_elem(fd, &ifindex, &v, BPF_ANY) ? -errno : 0;
}

static int owned_or(struct inj_ctx *c, uint32_t ifindex, uint32_t flag)
{
	return inj_owned_set(c, ifindex, inj_owned_get(c, ifindex) | flag);
}

/* a test's kill -9 at a named point (RDMA_INJECT_CRASH_AT=NAME; only
 * tests/bpf/inject_cli.sh sets it): what a kill in that window leaves,
 * made certain */
static void crash_point(const char *name)
{
	const char *at = getenv("RDMA_INJECT_CRASH_AT");

	if (at && !strcmp(at, name))
		raise(SIGKILL);
}

struct clsact_find {
	uint32_t ifindex;
	int found;
};

static void clsact_seen(uint32_t ifindex, const char *kind, uint32_t handle, void *arg)
{
	struct clsact_find *f = arg;

	(void)handle;
	if (ifindex == f->ifindex && !strcmp(kind, "clsact"))
		f->found = 1;
}

/* the hook's entry in inj_hooks, with a counter slot of its own */
int inj_hook_register(struct inj_ctx *c, uint32_t hk)
{
	struct inject_bpf *s = inj_maps(c);
	int hfd = bpf_map__fd(s->maps.inj_hooks), r = 0, nk, j;
	uint8_t used[INJ_MAX_HOOKS] = { 0 };
	uint32_t keys[INJ_MAX_HOOKS], slot;
	struct inj_hook hv = { 0 };
	void *zero;

	if (!bpf_map_lookup_elem(hfd, &hk, &hv))
		return 0;
	nk = inj_hook_keys(hfd, keys);
	for (j = 0; j < nk; j++)
		if (!bpf_map_lookup_elem(hfd, &keys[j], &hv) && hv.slot < INJ_MAX_HOOKS)
			used[hv.slot] = 1;
	for (slot = 0; slot < INJ_MAX_HOOKS && used[slot]; slot++)
		;
	if (slot == INJ_MAX_HOOKS)
		return -ENOSPC;
	zero = calloc((size_t)c->ncpu, sizeof(struct inj_hook_ctr));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_hook_ctrs), &slot, zero, BPF_ANY))
		r = -errno;
	free(zero);
	memset(&hv, 0, sizeof(hv));
	hv.slot = slot;
	if (!r)
		r = inj_hook_put(c, hk, &hv, BPF_NOEXIST);
	return r;
}

/* the device's clsact (hook: a tc hook of it), made if it has none: 0 or
 * -errno */
int inj_clsact_ensure(struct inj_ctx *c, uint32_t ifindex, struct bpf_tc_hook *hook)
{
	/*
	 * We make the clsact, so flush removes it: recorded before it is made
	 * (a kill between the two would leave one that flush cannot know for
	 * ours; flush's destroy of one never made is harmless), and taken
	 * back if the device had one after all or the create fails.
	 */
	struct clsact_find cf = { ifindex, 0 };
	uint32_t was = inj_owned_get(c, ifindex);
	int ahead = !(was & INJ_OWN_CLSACT) && !qdisc_scan(clsact_seen, &cf) && !cf.found;
	int r;

	if (ahead)
		inj_owned_set(c, ifindex, was | INJ_OWN_CLSACT);
	r = bpf_tc_hook_create(hook);
	crash_point("clsact-made");
	if (!r && !ahead)	/* made where the scan could not look first */
		owned_or(c, ifindex, INJ_OWN_CLSACT);
	else if (r && ahead)
		inj_owned_set(c, ifindex, was);
	return r && r != -EEXIST ? r : 0;
}

int inj_hook_attach(struct inj_ctx *c, uint32_t ifindex, int dir)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
		    .attach_point = dir == INJ_DIR_EGRESS ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);
	LIBBPF_OPTS(bpf_tc_opts, a, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);
	int r, fd;

	r = inj_hook_register(c, inj_hook_key(ifindex, (uint32_t)dir));
	if (r || (inj_owned_get(c, ifindex) & INJ_OWN_XDP))
		return r;	/* a forwarder's port: its XDP program runs the hook */
	r = inj_clsact_ensure(c, ifindex, &hook);
	if (r)
		return r;
	if (!bpf_tc_query(&hook, &q))
		return 0;	/* already attached (by us, earlier) */
	fd = inj_prog_fd(c, dir);
	if (fd < 0)
		return fd;
	a.prog_fd = fd;
	return bpf_tc_attach(&hook, &a);
}

int inj_hook_detach(uint32_t ifindex, int dir)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
		    .attach_point = dir == INJ_DIR_EGRESS ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);

	if (bpf_tc_query(&hook, &q))
		return 0;
	q.prog_fd = q.prog_id = 0;
	q.flags = 0;
	return bpf_tc_detach(&hook, &q);
}

/* the other end of a veth, 0 if ifindex is not one end of a pair */
uint32_t inj_veth_peer(uint32_t ifindex)
{
	char name[IF_NAMESIZE], path[128], kind[64] = "";
	unsigned int peer = 0;
	FILE *f;

	if (!if_indextoname(ifindex, name))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/iflink", name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &peer) != 1)
		peer = 0;
	fclose(f);
	/* iflink == ifindex for ordinary devices; veth points at its peer */
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
	if (peer == ifindex || !access(path, F_OK))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/uevent", name);
	f = fopen(path, "re");
	if (f) {
		char line[128];

		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "DEVTYPE=", 8))
				snprintf(kind, sizeof(kind), "%s", line + 8);
		fclose(f);
	}
	return kind[0] ? 0 : peer;	/* veths have no DEVTYPE (bridges, vlans do) */
}

/*
 * Delay and reorder need a queue, which only egress has. Ingress of a veth
 * is the egress of its peer: the rule moves there (said in err as a note).
 */
int inj_place_on_egress(struct inj_rule *r, char *err, size_t errlen)
{
	char name[IF_NAMESIZE] = "?", peer_name[IF_NAMESIZE] = "?";
	uint32_t peer;

	if ((r->action != INJ_ACT_DELAY && r->action != INJ_ACT_REORDER) ||
	    r->dir == INJ_DIR_EGRESS)
		return 0;
	if_indextoname(r->ifindex, name);
	peer = inj_veth_peer(r->ifindex);
	if (!peer) {
		snprintf(err, errlen, "%s: %s needs a queue and ingress has none; %s is not a veth, "
			 "so put the rule on the egress of the device that sends to it",
			 name, inj_action_name(r->action), name);
		return -EINVAL;
	}
	if_indextoname(peer, peer_name);
	snprintf(err, errlen, "note: %s ingress has no queue: %s applied on its veth peer %s egress",
		 name, inj_action_name(r->action), peer_name);
	r->ifindex = peer;
	r->dir = INJ_DIR_EGRESS;
	return 0;
}

/* a hook no rule uses any more is detached (a cnp rule uses both directions) */
void inj_hook_gc(struct inj_ctx *c, uint32_t ifindex, int dir)
{
	struct inj_rule r;
	struct inj_hook hv;
	uint32_t i;

	/* a forwarder's port keeps both hooks (and their counters) while it
	 * forwards: forward stop or flush ends them */
	if (inj_owned_get(c, ifindex) & INJ_OWN_XDP)
		return;
	for (i = 0; i < INJ_MAX_RULES; i++)
		if (!inj_rule_read(c, i, &r) && r.id && r.ifindex == ifindex &&
		    (r.dir == dir || r.action == INJ_ACT_CNP))
			return;
	i = inj_hook_key(ifindex, (uint32_t)dir);
	if (!bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_hooks), &i, &hv) &&
	    (hv.flags & INJ_HOOK_TRACE))
		return;	/* a trace still reads it */
	inj_hook_detach(ifindex, dir);
	hook_drop(c, i);
}

int inj_hook_counters(struct inj_ctx *c, uint32_t ifindex, int dir, struct inj_hook_ctr *sum)
{
	uint32_t hk = inj_hook_key(ifindex, (uint32_t)dir);
	struct inj_hook hv;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_hooks), &hk, &hv))
		return -ENOENT;
	return inj_percpu_sum(c, bpf_map__fd(inj_maps(c)->maps.inj_hook_ctrs), hv.slot, sum, sizeof(*sum));
}

int inj_hook_list(struct inj_ctx *c, uint32_t *ifindex, int *dir, int max)
{
	struct if_nameindex *all = if_nameindex(), *p;
	int n = 0, d;

	if (!all)
		return -errno;
	for (p = all; p->if_index && n < max; p++) {
		/* a forwarder's port has both hooks, with or without a tc filter */
		uint32_t own = c && inj_maps(c) ? inj_owned_get(c, p->if_index) : 0;

		for (d = 0; d < 2 && n < max; d++) {
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)p->if_index,
				    .attach_point = d ? BPF_TC_EGRESS : BPF_TC_INGRESS);
			LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);

			if (!(own & INJ_OWN_XDP) && bpf_tc_query(&hook, &q))
				continue;
			ifindex[n] = p->if_index;
			dir[n++] = d;
		}
	}
	if_freenameindex(all);
	return n;
}

/* --- tracing (inject_abi.h): hooks flagged INJ_HOOK_TRACE, one reader --- */

static int hook_flags_set(struct inj_ctx *c, uint32_t hk, uint32_t set, uint32_t clear)
{
	int hfd = bpf_map__fd(inj_maps(c)->maps.inj_hooks);
	struct inj_hook hv;

	if (bpf_map_lookup_elem(hfd, &hk, &hv))
		return -ENOENT;
	hv.flags = (hv.flags & ~clear) | set;
	return inj_hook_put(c, hk, &hv, BPF_EXIST);
}

static void set_trace(struct inj_cfg *cfg, const void *arg)
{
	const uint32_t *v = arg;	/* snaplen, pid */

	cfg->trace_snaplen = v[0];
	cfg->trace_pid = v[1];
}

static int cfg_trace(struct inj_ctx *c, uint32_t snaplen, uint32_t pid)
{
	uint32_t v[2] = { snaplen, pid };

	return inj_cfg_update(c, set_trace, v);
}

/* every hook's trace flag off, and the hooks no rule uses detached */
static void trace_clear_all(struct inj_ctx *c)
{
	uint32_t keys[INJ_MAX_HOOKS];
	int j, nk = inj_hook_keys(bpf_map__fd(inj_maps(c)->maps.inj_hooks), keys);

	for (j = 0; j < nk; j++)
		if (!hook_flags_set(c, keys[j], 0, INJ_HOOK_TRACE))
			inj_hook_gc(c, keys[j] >> 1, (int)(keys[j] & 1));
	cfg_trace(c, 0, 0);
}

int inj_trace_begin(struct inj_ctx *c, const uint32_t *ifindex, const int *dir, int n,
		    uint32_t snaplen, char *err, size_t errlen)
{
	uint32_t owner = inj_trace_owner(c->pin_root);
	int i, r;

	if (owner && owner != (uint32_t)getpid()) {
		snprintf(err, errlen, "a trace is already running on this host (rdma-inject pid %u): "
			 "one reads the ring at a time", owner);
		return -EBUSY;
	}
	if (snaplen < 1 || snaplen > INJ_TRACE_SNAP_MAX) {
		snprintf(err, errlen, "snap length %u: 1 to %d bytes", snaplen, INJ_TRACE_SNAP_MAX);
		return -EINVAL;
	}
	trace_clear_all(c);	/* what a trace that died left flagged */
	r = cfg_trace(c, snaplen, (uint32_t)getpid());
	if (!r)	/* the hooks count resent packets too: the trace is checked against it */
		r = inj_track_set(c, 1);
	for (i = 0; !r && i < n; i++) {
		r = inj_hook_attach(c, ifindex[i], dir[i]);
		if (!r)
			r = hook_flags_set(c, inj_hook_key(ifindex[i], (uint32_t)dir[i]),
					   INJ_HOOK_TRACE, 0);
		if (r) {
			char name[IF_NAMESIZE] = "?";

			if_indextoname(ifindex[i], name);
			snprintf(err, errlen, "%s %s: cannot attach the tc program: %s", name,
				 dir[i] ? "egress" : "ingress", strerror(-r));
		}
	}
	if (r)
		trace_clear_all(c);
	return r;
}

void inj_trace_stop(struct inj_ctx *c)
{
	uint32_t keys[INJ_MAX_HOOKS];
	int j, nk = inj_hook_keys(bpf_map__fd(inj_maps(c)->maps.inj_hooks), keys);

	for (j = 0; j < nk; j++)
		hook_flags_set(c, keys[j], 0, INJ_HOOK_TRACE);
}

void inj_trace_end(struct inj_ctx *c)
{
	trace_clear_all(c);
}

int inj_trace_ring_fd(struct inj_ctx *c)
{
	return bpf_map__fd(inj_maps(c)->maps.inj_trace);
}

/* tracking (inject_abi.h): switched on by hand, the QPs seen, a new count */
int inj_track_set(struct inj_ctx *c, uint32_t on)
{
	uint32_t zero = 0, v = on ? INJ_TRACK_QP : 0;

	return bpf_map_update_elem(bpf_map__fd(inj_maps(c)->maps.inj_track), &zero, &v, BPF_ANY) ?
		       -errno : 0;
}

int inj_track_get(struct inj_ctx *c, uint32_t *by_hand, uint32_t *by_rules)
{
	int fd = bpf_map__fd(inj_maps(c)->maps.inj_cfg);
	struct inj_cfg cfg;
	uint32_t zero = 0;

	*by_hand = *by_rules = 0;
	if (!bpf_map_lookup_elem(fd, &zero, &cfg))
		*by_rules = cfg.track;
	bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_track), &zero, by_hand);
	return 0;
}

int inj_qp_list(struct inj_ctx *c, struct inj_qp_key *keys, struct inj_qp *qps, int max)
{
	int fd = bpf_map__fd(inj_maps(c)->maps.inj_qps), n = 0, first = 1;
	struct inj_qp_key k, nk;

	/* each side of each QP; the entries that number QPs (INJ_QP_ID) are
	 * the program's own */
	while (n < max && !bpf_map_get_next_key(fd, first ? NULL : &k, &nk)) {
		k = nk;
		first = 0;
		if (k.resp == INJ_QP_ID || bpf_map_lookup_elem(fd, &k, &qps[n]))
			continue;
		keys[n++] = k;
	}
	return n;
}

/* every entry of a hash map deleted (the first key each time: deleting
 * the key an iteration stands on would restart it anyway) */
static void hash_clear(int fd, size_t key_size)
{
	uint8_t k[64];

	if (key_size > sizeof(k))
		return;
	while (!bpf_map_get_next_key(fd, NULL, k))
		if (bpf_map_delete_elem(fd, k))
			break;
}

int inj_qp_reset(struct inj_ctx *c)
{
	struct inject_bpf *s = inj_maps(c);
	struct inj_qp_next zero = { 0 };
	uint32_t i;

	hash_clear(bpf_map__fd(s->maps.inj_qps), sizeof(struct inj_qp_key));
	hash_clear(bpf_map__fd(s->maps.inj_tx), sizeof(struct inj_tx_key));
	for (i = 0; i < INJ_MAX_HOOKS; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_qp_next), &i, &zero, BPF_ANY))
			return -errno;
	return 0;
}
