// SPDX-License-Identifier: MIT
/*
 * The injector's state (inj_int.h): the lock, the maps pinned under the pin
 * root (one skeleton per direction is loaded, its rodata says which; both
 * reuse the maps, so every hook shares one table), and the rule table:
 * rules added, changed, deleted, listed and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/file.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "inj_int.h"
#include "../lib/clock.h"
#include "../lib/fnv.h"

_Static_assert(sizeof(struct inj_rule) == 160, "inj_rule layout");
_Static_assert(sizeof(struct inj_rule_ctr) == 72, "inj_rule_ctr layout");
_Static_assert(sizeof(struct inj_hook_ctr) == 56, "inj_hook_ctr layout");
_Static_assert(sizeof(struct inj_cfg) == 56, "inj_cfg layout");
_Static_assert(INJ_ITAB_SEGS >= 2 * INJ_MAX_RULES + 1, "an interval table holds every rule's ends");
_Static_assert(sizeof(struct inj_trace_hdr) == 32, "inj_trace_hdr layout");

/*
 * One rdma-inject at a time changes the state: every command holds an
 * exclusive flock on INJ_LOCK_PATH from opening the state to closing it
 * (20 adds at once used to give duplicate ids and lose rules). The file
 * also keeps the last rule id handed out, so ids only grow while the host
 * is up: a deleted rule's id is never reused (a lease holding an old id
 * cannot remove a newer rule). /run is the same in every mount namespace
 * ip netns exec makes, where /sys/fs/bpf is not.
 */
#define LOCK_WAIT_MS 20000	/* under the agent's 60 s for one rdma-inject */

/* "pid N (comm)" of whoever holds a flock on inode ino, from /proc/locks */
static void lock_holder(ino_t ino, char *buf, size_t len)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];

	snprintf(buf, len, "an unknown process");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long i;
		char kind[16];
		int pid;

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:19:567 0 EOF" (a "->" line waits) */
		if (sscanf(line, "%*d: %15s %*s %*s %d %*x:%*x:%llu", kind, &pid, &i) == 3 &&
		    !strcmp(kind, "FLOCK") && i == (unsigned long long)ino) {
			char path[64], comm[32] = "?";
			FILE *c;

			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if ((c = fopen(path, "re"))) {
				if (fgets(comm, sizeof(comm), c))
					comm[strcspn(comm, "\n")] = 0;
				fclose(c);
			}
			snprintf(buf, len, "pid %d (%s)", pid, comm);
			break;
		}
	}
	fclose(f);
}

/*
 * The lock, waited for at most LOCK_WAIT_MS: a holder that hangs makes
 * every later command fail with its name, not wait behind it for ever.
 */
int inj_state_lock(void)
{
	const char *path = getenv("RTB_INJ_LOCK") ? getenv("RTB_INJ_LOCK") : INJ_LOCK_PATH;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600), waited = 0;
	const char *w = getenv("RTB_INJ_LOCK_WAIT_MS");
	int limit = w ? atoi(w) : LOCK_WAIT_MS;

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		struct stat st;
		char who[80];
		int e = errno;

		if (e == EINTR)
			continue;
		if (e != EWOULDBLOCK) {
			close(fd);
			return -e;
		}
		if (waited >= limit) {
			if (fstat(fd, &st))
				st.st_ino = 0;
			lock_holder(st.st_ino, who, sizeof(who));
			fprintf(stderr, "rdma-inject: %s held by %s for %d ms: giving up\n", path, who,
				waited);
			close(fd);
			return -EBUSY;
		}
		nanosleep(&ts, NULL);
		waited += 10;
	}
	return fd;
}

/* the last id handed out, as kept in the lock file (0: none yet) */
static uint32_t last_id(int fd)
{
	char buf[16] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	return n > 0 ? (uint32_t)strtoul(buf, NULL, 10) : 0;
}

static void set_last_id(int fd, uint32_t id)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%u\n", id);

	if (pwrite(fd, buf, (size_t)n, 0) == n)
		(void)ftruncate(fd, n);
}

/* the id of the program of one of our tc filters on this host (in this
 * network namespace), 0 when none is attached: the first hook of
 * inj_hook_list, asked for its program */
uint32_t inj_our_prog_id(void)
{
	uint32_t ifx[1];
	int dir[1];

	if (inj_hook_list(NULL, ifx, dir, 1) <= 0)
		return 0;
	{
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifx[0],
			    .attach_point = dir[0] ? BPF_TC_EGRESS : BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);

		return bpf_tc_query(&hook, &q) ? 0 : q.prog_id;
	}
}

/* fn(map fd, its kernel name, arg) for every map of program prog_id */
void inj_for_prog_maps(uint32_t prog_id, void (*fn)(int, const char *, void *), void *arg)
{
	uint32_t ids[32], len, i;
	struct bpf_prog_info pi = { .nr_map_ids = 32, .map_ids = (uint64_t)(uintptr_t)ids };
	int pfd = bpf_prog_get_fd_by_id(prog_id);

	len = sizeof(pi);
	if (pfd < 0)
		return;
	if (bpf_obj_get_info_by_fd(pfd, &pi, &len))
		pi.nr_map_ids = 0;
	close(pfd);
	for (i = 0; i < pi.nr_map_ids && i < 32; i++) {
		struct bpf_map_info mi = { 0 };
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		len = sizeof(mi);
		if (mfd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &len))
			fn(mfd, mi.name, arg);
		close(mfd);
	}
}

static void reuse_one(int mfd, const char *name, void *arg)
{
	struct inject_bpf *s = arg;
	struct bpf_map *m;

	bpf_object__for_each_map(m, s->obj)
		if (bpf_map__pin_path(m) && !strncmp(bpf_map__name(m), name, BPF_OBJ_NAME_LEN - 1))
			bpf_map__reuse_fd(m, mfd);	/* it dups mfd */
}

/*
 * The state when its pins are gone (ip netns exec mounts a fresh sysfs, so
 * a fresh bpffs, for every command; a container may have none): found from
 * the kernel instead, through one of our tc filters -- its program, the
 * program's maps by id -- and reused by name, so that a second add in such
 * a namespace joins the first instead of replacing it. Then pinned anew.
 */
static void adopt_maps(struct inject_bpf *s, const char *pin_root)
{
	char path[512];
	uint32_t id;

	snprintf(path, sizeof(path), "%s/inj_rules", pin_root);
	if (access(path, F_OK) && (id = inj_our_prog_id()))	/* pinned: libbpf reuses them */
		inj_for_prog_maps(id, reuse_one, s);
}

static void dup_if_owned(int mfd, const char *name, void *arg)
{
	if (!strcmp(name, "inj_owned") && *(int *)arg < 0)
		*(int *)arg = dup(mfd);
}

/* the inj_owned map: pinned, or found through our attached program */
int inj_owned_map_fd(const char *root)
{
	char path[512];
	uint32_t id;
	int fd;

	snprintf(path, sizeof(path), "%s/inj_owned", root);
	fd = bpf_obj_get(path);
	if (fd < 0 && (id = inj_our_prog_id()))
		inj_for_prog_maps(id, dup_if_owned, &fd);
	return fd;
}

/*
 * The tc program of a direction, pinned as prog_in_HASH / prog_eg_HASH
 * (HASH: of this build's BPF object, so another version's is never taken):
 * the verifier takes seconds over it (about 886k instructions processed:
 * 8 s a load on a 6.18 host), so the first command loads and pins it and
 * every later one reuses it, loading the maps only. flush removes the pins.
 */
static void prog_pin_path(const struct inj_ctx *c, int dir, char *path, size_t len)
{
	static uint64_t h;	/* FNV-1a of the object, once a process */

	if (!h) {
		size_t n;
		const unsigned char *b = inject_bpf__elf_bytes(&n);

		h = fnv1a(FNV_OFFSET, b, n);
	}
	snprintf(path, len, "%s/prog_%s_%016llx", c->pin_root, dir ? "eg" : "in",
		 (unsigned long long)h);
}

static struct inject_bpf *load(struct inj_ctx *c, int dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = c->pin_root);
	struct inject_bpf *s;
	char path[600];
	int r, pfd;

	if (c->skel[dir])
		return c->skel[dir];
	s = inject_bpf__open_opts(&oo);
	if (!s)
		return NULL;
	s->rodata->inj_dir = (__u32)dir;
	adopt_maps(s, c->pin_root);
	prog_pin_path(c, dir, path, sizeof(path));
	pfd = bpf_obj_get(path);
	if (pfd >= 0)	/* the maps only: the program is there */
		bpf_program__set_autoload(s->progs.inj_tc, false);
	r = inject_bpf__load(s);
	if (r) {
		if (pfd >= 0)
			close(pfd);
		inject_bpf__destroy(s);
		errno = -r;
		return NULL;
	}
	if (pfd < 0)	/* a failed pin only costs the next command a load */
		bpf_obj_pin(bpf_program__fd(s->progs.inj_tc), path);
	c->prog[dir] = pfd >= 0 ? pfd : 0;
	c->skel[dir] = s;
	return s;
}

/* any loaded skeleton: they share the maps */
struct inject_bpf *inj_maps(struct inj_ctx *c)
{
	return c->skel[0] ? c->skel[0] : c->skel[1];
}

/* path is a directory on a BPF filesystem */
int inj_is_bpffs(const char *path)
{
	struct statfs st;
	struct stat sb;

	return !lstat(path, &sb) && S_ISDIR(sb.st_mode) && !statfs(path, &st) &&
	       st.f_type == BPF_FS_MAGIC;
}

/* pinning needs bpffs; mount it where tc and bpftool expect it when absent */
static int bpffs_ensure(const char *pin_root)
{
	struct statfs st;

	if (strncmp(pin_root, "/sys/fs/bpf/", 12))
		return 0;
	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir("/sys/fs/bpf", 0700) && errno != EEXIST)
		return -errno;
	return mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") ? -errno : 0;
}


/* rules whose lease ran out (their owner died without removing them): the
 * program already ignores them; every command's open removes them */
static void leases_gc(struct inj_ctx *c)
{
	struct inj_rule r;
	uint64_t now = rtb_now_ns(), dl;
	uint32_t i, id;

	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (inj_rule_read(c, i, &r) || !r.id || !r.lease_ns)
			continue;
		id = r.id;
		if (bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_leases), &id, &dl) || now >= dl)
			inj_rule_del(c, id);
	}
}

struct inj_ctx *inj_open(const char *pin_root)
{
	struct inj_ctx *c = calloc(1, sizeof(*c));
	int made;

	if (!c)
		return NULL;
	if ((c->lock = inj_state_lock()) < 0) {
		errno = -c->lock;
		free(c);
		return NULL;
	}
	snprintf(c->pin_root, sizeof(c->pin_root), "%s", pin_root ? pin_root : INJ_PIN_DIR);
	if (bpffs_ensure(c->pin_root) || ((made = !mkdir(c->pin_root, 0700)) == 0 && errno != EEXIST)) {
		int e = errno;

		close(c->lock);
		free(c);
		errno = e;
		return NULL;
	}
	if (!inj_is_bpffs(c->pin_root)) {	/* a directory made elsewhere: not ours to use */
		if (made)
			rmdir(c->pin_root);
		close(c->lock);
		free(c);
		errno = ENOTDIR;
		return NULL;
	}
	c->ncpu = libbpf_num_possible_cpus();
	if (c->ncpu < 1 || !load(c, INJ_DIR_INGRESS)) {
		int e = errno ? errno : EINVAL;

		inj_close(c);
		errno = e;
		return NULL;
	}
	leases_gc(c);
	return c;
}

void inj_close(struct inj_ctx *c)
{
	if (!c)
		return;
	inject_bpf__destroy(c->skel[0]);
	inject_bpf__destroy(c->skel[1]);
	if (c->prog[0] > 0)
		close(c->prog[0]);
	if (c->prog[1] > 0)
		close(c->prog[1]);
	if (c->lock >= 0)
		close(c->lock);	/* the flock goes with it */
	free(c);
}

void inj_unlock(struct inj_ctx *c)
{
	if (c && c->lock >= 0) {
		close(c->lock);
		c->lock = -1;
	}
}

int inj_prog_fd(struct inj_ctx *c, int dir)
{
	struct inject_bpf *s = load(c, dir & 1);

	if (!s)
		return -errno;
	return c->prog[dir & 1] > 0 ? c->prog[dir & 1] : bpf_program__fd(s->progs.inj_tc);
}

int inj_empty_prog_fd(struct inj_ctx *c)
{
	return bpf_program__fd(inj_maps(c)->progs.inj_empty);
}

int inj_rule_read(struct inj_ctx *c, uint32_t slot, struct inj_rule *r)
{
	return bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_rules), &slot, r) ? -errno : 0;
}

static int find_slot(struct inj_ctx *c, uint32_t id, struct inj_rule *r)
{
	uint32_t i;

	for (i = 0; i < INJ_MAX_RULES; i++)
		if (!inj_rule_read(c, i, r) && r->id && r->id == id)
			return (int)i;
	return -ENOENT;
}

/* the config entry read, changed by fn, written back */
int inj_cfg_update(struct inj_ctx *c, void (*fn)(struct inj_cfg *, const void *), const void *arg)
{
	int fd = bpf_map__fd(inj_maps(c)->maps.inj_cfg);
	struct inj_cfg cfg;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &cfg))
		memset(&cfg, 0, sizeof(cfg));
	fn(&cfg, arg);
	return bpf_map_update_elem(fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

static void set_seed(struct inj_cfg *cfg, const void *arg)
{
	cfg->seed = *(const uint64_t *)arg;
	cfg->generation++;
}

int inj_set_seed(struct inj_ctx *c, uint64_t seed)
{
	return inj_cfg_update(c, set_seed, &seed);
}


static int validate(const struct inj_rule *r, char *err, size_t errlen)
{
	if (!r->ifindex) {
		snprintf(err, errlen, "a rule needs a device (dev NAME)");
		return -EINVAL;
	}
	if (r->action >= INJ_ACT_MAX || r->dir > 1) {
		snprintf(err, errlen, "bad action or direction");
		return -EINVAL;
	}
	if (r->qpn_lo > r->qpn_hi || r->psn_lo > r->psn_hi || r->len_min > r->len_max ||
	    ((r->rel & INJ_REL_QP) && (!r->qp_lo || r->qp_lo > r->qp_hi)) ||
	    ((r->rel & INJ_REL_TX) && (!r->tx_lo || r->tx_lo > r->tx_hi))) {
		snprintf(err, errlen, "empty range (low > high)");
		return -EINVAL;
	}
	if ((r->model == INJ_MODEL_EVERY_NTH || r->model == INJ_MODEL_ONLY_NTH) && !r->nth) {
		snprintf(err, errlen, "nth must be at least 1");
		return -EINVAL;
	}
	return 0;
}

static int zero_slot(struct inj_ctx *c, uint32_t slot)
{
	struct inject_bpf *s = inj_maps(c);
	struct inj_rule_state st = { 0 };
	size_t n = sizeof(struct inj_rule_ctr) * (size_t)c->ncpu;
	void *z = calloc(1, n);
	int r = 0;

	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_rule_ctrs), &slot, z, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.inj_state), &slot, &st, BPF_ANY))
		r = -errno;
	free(z);
	return r;
}

/* the prio qdisc of a delay or reorder rule on port ifindex: 0 or -errno */
static int prio_on(struct inj_ctx *c, uint32_t ifindex, uint64_t hold_ns, char *err,
		   size_t errlen)
{
	/* recorded as ours before it is made, as the clsact (hook_attach) */
	uint32_t was = inj_owned_get(c, ifindex);
	int ret;

	if (!(was & INJ_OWN_PRIO))
		inj_owned_set(c, ifindex, was | INJ_OWN_PRIO);
	ret = qdisc_prio_ensure(ifindex, hold_ns, err, errlen);
	if (ret < 0 && !(was & INJ_OWN_PRIO))
		inj_owned_set(c, ifindex, was);
	return ret < 0 ? ret : 0;
}

/* the queues a delay or reorder rule needs: its device's egress; on a
 * forwarder's port, every port of the forwarder (its packets may leave by
 * any of them) */
static int prio_for(struct inj_ctx *c, const struct inj_rule *r, char *err, size_t errlen)
{
	int fd = bpf_map__fd(inj_maps(c)->maps.inj_owned), ret = 0;
	uint32_t k, next, v, *prev = NULL;

	if (!(inj_owned_get(c, r->ifindex) & INJ_OWN_XDP))
		return prio_on(c, r->ifindex, r->hold_ns, err, errlen);
	while (!ret && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(fd, &k, &v) && (v & INJ_OWN_XDP))
			ret = prio_on(c, k, r->hold_ns, err, errlen);
	}
	return ret;
}

int inj_rule_add(struct inj_ctx *c, struct inj_rule *r, char *err, size_t errlen)
{
	struct inj_rule cur;
	uint32_t i, free_slot = INJ_MAX_RULES, max_id = 0;
	int ret;

	ret = validate(r, err, errlen);
	/* a forwarder's port queues on its way out (forward.bpf.c's slow path) */
	if (!ret && !(inj_owned_get(c, r->ifindex) & INJ_OWN_XDP))
		ret = inj_place_on_egress(r, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (inj_rule_read(c, i, &cur))
			return -EIO;
		if (!cur.id && free_slot == INJ_MAX_RULES)
			free_slot = i;
		if (cur.id > max_id)
			max_id = cur.id;
	}
	if (free_slot == INJ_MAX_RULES) {
		snprintf(err, errlen, "rule table full (%d rules)", INJ_MAX_RULES);
		return -ENOSPC;
	}
	if ((inj_owned_get(c, r->ifindex) & INJ_OWN_XDP) && !inj_xdp_action(r->action)) {
		snprintf(err, errlen, "%s on a port of rdma-inject forward: the forwarder "
			 "does not do it", inj_action_name(r->action));
		return -EOPNOTSUPP;
	}
	if (r->action == INJ_ACT_DELAY || r->action == INJ_ACT_REORDER) {
		ret = prio_for(c, r, err, errlen);
		if (ret < 0)
			return ret;
	}
	ret = inj_hook_attach(c, r->ifindex, r->dir);
	/* a cnp rule's CNP is made on the device's other direction (inject_abi.h) */
	if (!ret && r->action == INJ_ACT_CNP)
		ret = inj_hook_attach(c, r->ifindex, !r->dir);
	if (ret) {
		char name[IF_NAMESIZE] = "?";

		if_indextoname(r->ifindex, name);
		snprintf(err, errlen, "%s: cannot attach the tc program (%s): %s", name,
			 r->dir ? "egress" : "ingress", strerror(-ret));
		return ret;
	}
	/* above every id in the table and every id handed out before */
	if (c->lock < 0)
		return -ENOLCK;	/* inj_unlock'ed: reading only */
	r->id = (max_id > last_id(c->lock) ? max_id : last_id(c->lock)) + 1;
	set_last_id(c->lock, r->id);
	ret = zero_slot(c, free_slot);
	if (!ret && r->lease_ns) {	/* the deadline before the rule: never one without */
		uint64_t dl = rtb_now_ns() + r->lease_ns;

		if (bpf_map_update_elem(bpf_map__fd(inj_maps(c)->maps.inj_leases), &r->id, &dl, BPF_ANY))
			ret = -errno;
	}
	if (!ret)	/* the window starts now, with the program attached */
		inj_rule_window_start(r);
	if (!ret && bpf_map_update_elem(bpf_map__fd(inj_maps(c)->maps.inj_rules), &free_slot, r,
					BPF_ANY))
		ret = -errno;
	if (!ret)
		ret = inj_masks_sync(c);
	return ret;
}

int inj_rule_get(struct inj_ctx *c, uint32_t id, struct inj_rule *r)
{
	return find_slot(c, id, r) < 0 ? -ENOENT : 0;
}

int inj_rule_set(struct inj_ctx *c, const struct inj_rule *r, char *err, size_t errlen)
{
	struct inj_rule cur;
	uint32_t slot;
	int s, ret;

	s = find_slot(c, r->id, &cur);
	if (s < 0) {
		snprintf(err, errlen, "no rule %u", r->id);
		return s;
	}
	ret = validate(r, err, errlen);
	if (ret)
		return ret;
	if (r->ifindex != cur.ifindex || r->dir != cur.dir) {
		snprintf(err, errlen, "a rule cannot move to another device or direction");
		return -EINVAL;
	}
	if (r->action == INJ_ACT_CNP && cur.action != INJ_ACT_CNP) {
		ret = inj_hook_attach(c, r->ifindex, !r->dir);
		if (ret) {
			snprintf(err, errlen, "cannot attach the tc program to the other direction: %s",
				 strerror(-ret));
			return ret;
		}
	}
	slot = (uint32_t)s;
	s = cur.action == INJ_ACT_CNP && r->action != INJ_ACT_CNP;
	cur = *r;
	inj_rule_window_start(&cur);
	if (bpf_map_update_elem(bpf_map__fd(inj_maps(c)->maps.inj_rules), &slot, &cur, BPF_ANY))
		return -errno;
	ret = inj_masks_sync(c);
	if (s)	/* no longer a cnp rule: its other direction may go */
		inj_hook_gc(c, r->ifindex, !r->dir);
	return ret;
}

int inj_rule_del(struct inj_ctx *c, uint32_t id)
{
	struct inj_rule cur, empty = { 0 };
	uint32_t slot;
	int s, r;

	s = find_slot(c, id, &cur);
	if (s < 0)
		return s;
	slot = (uint32_t)s;
	if (bpf_map_update_elem(bpf_map__fd(inj_maps(c)->maps.inj_rules), &slot, &empty, BPF_ANY))
		return -errno;
	bpf_map_delete_elem(bpf_map__fd(inj_maps(c)->maps.inj_leases), &id);	/* none: fine */
	r = inj_masks_sync(c);
	inj_hook_gc(c, cur.ifindex, cur.dir);
	if (cur.action == INJ_ACT_CNP)
		inj_hook_gc(c, cur.ifindex, !cur.dir);
	return r;
}

int inj_rule_list(struct inj_ctx *c, struct inj_rule *out, int max)
{
	struct inj_rule r;
	uint32_t i;
	int n = 0;

	for (i = 0; i < INJ_MAX_RULES && n < max; i++)
		if (!inj_rule_read(c, i, &r) && r.id)
			out[n++] = r;
	return n;
}

/* a per-CPU value made of u64 counters, summed over the CPUs */
int inj_percpu_sum(struct inj_ctx *c, int fd, uint32_t key, void *out, size_t size)
{
	size_t n = size / sizeof(uint64_t), i;
	uint64_t *per, *sum = out;
	int cpu;

	per = calloc((size_t)c->ncpu, size);
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, per)) {
		free(per);
		return -errno;
	}
	memset(out, 0, size);
	for (cpu = 0; cpu < c->ncpu; cpu++)
		for (i = 0; i < n; i++)
			sum[i] += per[(size_t)cpu * n + i];
	free(per);
	return 0;
}

int inj_rule_counters(struct inj_ctx *c, uint32_t id, struct inj_rule_ctr *sum)
{
	struct inj_rule cur;
	int s = find_slot(c, id, &cur);

	if (s < 0)
		return s;
	return inj_percpu_sum(c, bpf_map__fd(inj_maps(c)->maps.inj_rule_ctrs), (uint32_t)s, sum,
			  sizeof(*sum));
}

uint32_t inj_rule_add_text(struct inj_ctx *c, uint32_t ifindex, int dir, const char *text,
			   char *err, size_t errlen)
{
	char buf[512], *argv[64], *save;
	struct inj_rule r;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	inj_rule_init(&r);
	r.ifindex = ifindex;
	r.dir = (uint8_t)dir;
	if (inj_rule_parse(&r, argc, argv, 0, err, errlen) || inj_rule_add(c, &r, err, errlen))
		return 0;
	return r.id;
}
