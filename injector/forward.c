// SPDX-License-Identifier: MIT
/*
 * rdma-inject forward PORT PORT... [mac MAC=PORT]...: the injector as a
 * bump in the wire (forward.bpf.c). Two ports forward to each other; more
 * forward by the MAC table given, and flood what it does not name. Each
 * port's XDP program runs native where its driver has XDP, else generic,
 * the same mode on every port; the mode is said. The ports' hooks are the
 * tc program's, registered alike: `add dev PORT ingress|egress RULE` puts
 * rules there, `stats` counts, `trace` traces. `forward stop` takes it
 * down (`flush` too, with everything else).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "injector/inj.h"
#include "injector/inj_int.h"
#include "forward.skel.h"
#include "lib/log.h"

#define FWD_MAX 16


struct fwd_args {
	uint32_t port[FWD_MAX];
	char name[FWD_MAX][IF_NAMESIZE];
	int nports;
	struct inj_fwd_mac mac[256];
	uint32_t mac_port[256];
	int nmacs;
	int made_clsact[FWD_MAX];	/* slow_attach made the port's clsact */
};

static int parse_mac(const char *s, struct inj_fwd_mac *k)
{
	unsigned v[6];
	int n = 0;

	memset(k, 0, sizeof(*k));
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &n) != 6 ||
	    s[n] != '=')
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		k->a[i] = (uint8_t)v[i];
	}
	return n + 1;
}

static int fwd_parse(int argc, char **argv, struct fwd_args *a)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "mac")) {
			int off;
			uint32_t ifx;

			if (i + 1 >= argc || a->nmacs == 256 ||
			    (off = parse_mac(argv[i + 1], &a->mac[a->nmacs])) < 0 ||
			    !(ifx = if_nametoindex(argv[i + 1] + off))) {
				log_err("forward: mac %s: expected MAC=PORT (52:54:00:00:00:01=eth1), "
					"a port of this host", i + 1 < argc ? argv[i + 1] : "");
				return 2;
			}
			a->mac_port[a->nmacs++] = ifx;
			i++;
			continue;
		}
		if (a->nports == FWD_MAX) {
			log_err("forward: at most %d ports", FWD_MAX);
			return 2;
		}
		a->port[a->nports] = if_nametoindex(argv[i]);
		if (!a->port[a->nports]) {
			log_err("forward: %s: no such device", argv[i]);
			return 2;
		}
		snprintf(a->name[a->nports++], IF_NAMESIZE, "%s", argv[i]);
	}
	if (a->nports < 2) {
		log_err("forward: which ports? PORT PORT [PORT...] [mac MAC=PORT]...");
		return 2;
	}
	for (int i = 0; i < a->nmacs; i++) {
		int j;

		for (j = 0; j < a->nports && a->port[j] != a->mac_port[i]; j++)
			;
		if (j == a->nports) {
			log_err("forward: mac %d names a port that is not one of the forwarder's",
				i + 1);
			return 2;
		}
	}
	for (int i = 0; i < a->nports; i++)
		for (int j = 0; j < a->nports; j++)
			if (i != j && inj_veth_peer(a->port[i]) == a->port[j] &&
			    inj_veth_peer(a->port[j]) == a->port[i]) {
				log_err("forward: %s and %s are the two ends of one veth: every frame "
					"would go round between them", a->name[i], a->name[j]);
				return 2;
			}
	if (a->nports == 2 && (a->port[0] & (INJ_FWD_PEER_IDX - 1)) == (a->port[1] & (INJ_FWD_PEER_IDX - 1))) {
		log_err("forward: %s and %s share a slot of the peer table (ifindex %u and %u "
			"modulo %d): recreate one of them", a->name[0], a->name[1], a->port[0],
			a->port[1], INJ_FWD_PEER_IDX);
		return 2;
	}
	return 0;
}

/* XDP on every port, native if every driver has it, else generic: the
 * mode's flags, or -errno with the port that refused */
static int attach_all(const struct fwd_args *a, int fd, const char **mode)
{
	static const uint32_t modes[2] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };

	for (int m = 0; m < 2; m++) {
		int i, r = 0;

		for (i = 0; i < a->nports && !r; i++)
			r = bpf_xdp_attach((int)a->port[i], fd,
					   modes[m] | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		if (!r) {
			*mode = m ? "generic" : "native";
			return (int)modes[m];
		}
		while (i-- > 0)
			bpf_xdp_detach((int)a->port[i], modes[m], NULL);
		if (m)
			return r;
	}
	return -EINVAL;
}

/* the port's slot in the device maps */
static uint32_t slot_of(const struct fwd_args *a, uint32_t ifindex)
{
	uint32_t i;

	for (i = 0; i < (uint32_t)a->nports && a->port[i] != ifindex; i++)
		;
	return i;
}

/* one forwarder a host: is there one (its device map pinned, with ports)? */
static int fwd_running(const char *pin_root)
{
	char path[512];
	uint32_t k = 0, v = 0;
	int fd, busy;

	snprintf(path, sizeof(path), "%s/inj_fwd_ports", pin_root);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	busy = !bpf_map_lookup_elem(fd, &k, &v) && v;
	close(fd);
	return busy;
}

/* the injector's state when a forwarder runs (checked before inj_open
 * makes pins: a bad input leaves none), else NULL, said for verb */
static struct inj_ctx *fwd_open_running(const char *pin_root, const char *verb)
{
	struct inj_ctx *c;

	if (!fwd_running(pin_root ? pin_root : INJ_PIN_DIR)) {
		log_err("%s: no forwarder runs on this host", verb);
		return NULL;
	}
	c = inj_open(pin_root);
	if (!c)
		log_err("%s: cannot load the injector: %s", verb, strerror(errno));
	return c;
}

/* the device maps (a port's slot: its place on the command line), the peer
 * table (two ports) and the MAC table: 0 or -errno */
static int fwd_tables(struct forward_bpf *s, const struct fwd_args *a)
{
	int ports = bpf_map__fd(s->maps.inj_fwd_ports), flood = bpf_map__fd(s->maps.inj_fwd_flood);
	struct bpf_devmap_val v;
	uint32_t i;

	for (i = 0; i < (uint32_t)a->nports; i++) {
		struct inj_fwd_name nm = { { 0 } };

		snprintf(nm.name, sizeof(nm.name), "%s", a->name[i]);
		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_fwd_names), &i, &nm, BPF_ANY))
			return -errno;
		memset(&v, 0, sizeof(v));
		v.ifindex = a->port[i];
		if (bpf_map_update_elem(ports, &i, &v, BPF_ANY))
			return -errno;
		v.bpf_prog.fd = bpf_program__fd(s->progs.inj_fwd_eg);
		if (bpf_map_update_elem(flood, &i, &v, BPF_ANY))
			return -errno;
	}
	for (i = 0; a->nports == 2 && i < 2; i++) {
		struct inj_fwd_peer pe = { .in = a->port[i], .to = { a->port[1 - i], 1 - i } };
		uint32_t k = a->port[i] & (INJ_FWD_PEER_IDX - 1);

		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_fwd_peer), &k, &pe, BPF_ANY))
			return -errno;
	}
	for (i = 0; i < (uint32_t)a->nmacs; i++) {
		struct inj_fwd_to to = { a->mac_port[i], slot_of(a, a->mac_port[i]) };

		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_fwd_macs), &a->mac[i], &to, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* the slow path's tc program on every port's ingress: 0 or -errno */
static int slow_attach(struct inj_ctx *c, struct fwd_args *a, int fd)
{
	for (int i = 0; i < a->nports; i++) {
		LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = (int)a->port[i], .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, o, .handle = INJ_FWD_TC_HANDLE, .priority = INJ_FWD_TC_HANDLE,
			    .prog_fd = fd, .flags = BPF_TC_F_REPLACE);
		uint32_t was = inj_owned_get(c, a->port[i]);
		int r = inj_clsact_ensure(c, a->port[i], &h);

		a->made_clsact[i] = !(was & INJ_OWN_CLSACT) &&
				    (inj_owned_get(c, a->port[i]) & INJ_OWN_CLSACT);

		if (!r)
			r = bpf_tc_attach(&h, &o);
		if (r)
			return r;
	}
	return 0;
}

/* a veth port's peer in this namespace takes the frames redirected to the
 * port only with its NAPI on: a pass-all XDP program turns it on (GRO would
 * too). Recorded before it is attached; flush removes it. How many */
static int peers_pass(struct inj_ctx *c, const struct fwd_args *a, int fd)
{
	int n = 0;

	for (int i = 0; i < a->nports; i++) {
		uint32_t peer = inj_veth_peer(a->port[i]), was, id = 0;
		int j;

		for (j = 0; j < a->nports && a->port[j] != peer; j++)
			;
		if (!peer || j < a->nports || inj_veth_peer(peer) != a->port[i] ||
		    bpf_xdp_query_id((int)peer, 0, &id) || id)
			continue;	/* none here, a port itself, or one with XDP of its own */
		was = inj_owned_get(c, peer);
		inj_owned_set(c, peer, was | INJ_OWN_XDP_PEER);
		if (bpf_xdp_attach((int)peer, fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
				   NULL))
			inj_owned_set(c, peer, was);
		else
			n++;
	}
	return n;
}

/* a port of the forwarder taken down: its XDP program (either mode), its
 * slow path's filter, and those of our prio qdisc and clsact that drop
 * names (INJ_OWN_PRIO, INJ_OWN_CLSACT); its marks cleared and, with no
 * rule left on them, its hooks */
static void port_down(struct inj_ctx *c, uint32_t port, uint32_t drop)
{
	LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = (int)port, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = INJ_FWD_TC_HANDLE, .priority = INJ_FWD_TC_HANDLE);

	bpf_xdp_detach((int)port, XDP_FLAGS_DRV_MODE, NULL);
	bpf_xdp_detach((int)port, XDP_FLAGS_SKB_MODE, NULL);
	bpf_tc_detach(&h, &o);
	if (drop & INJ_OWN_PRIO)
		qdisc_prio_remove(port);
	if (drop & INJ_OWN_CLSACT) {
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&h);
	}
	inj_owned_set(c, port, inj_owned_get(c, port) & ~(INJ_OWN_XDP | drop));
	inj_hook_gc(c, port, INJ_DIR_INGRESS);
	inj_hook_gc(c, port, INJ_DIR_EGRESS);
}

/* a forward that failed half-way taken back: its ports and device map
 * entries (the clsacts only where it made them) */
static void fwd_undo(struct inj_ctx *c, struct forward_bpf *s, const struct fwd_args *a)
{
	for (uint32_t i = 0; i < (uint32_t)a->nports; i++) {
		port_down(c, a->port[i], a->made_clsact[i] ? INJ_OWN_CLSACT : 0);
		if (s)
			bpf_map_delete_elem(bpf_map__fd(s->maps.inj_fwd_ports), &i);
	}
}

/* a port's rule or trace that keeps the forwarder up: its message, 1; else 0 */
static int fwd_in_use(struct inj_ctx *c, uint32_t port, char *why, size_t len)
{
	char name[IF_NAMESIZE] = "?";
	struct inj_hook hv;
	struct inj_rule r;
	uint32_t i, hk;

	if_indextoname(port, name);
	for (i = 0; i < INJ_MAX_RULES; i++)
		if (!inj_rule_read(c, i, &r) && r.id && r.ifindex == port) {
			snprintf(why, len, "rule %u is on its port %s (del it first, or flush)",
				 r.id, name);
			return 1;
		}
	for (i = 0; i < 2; i++) {
		hk = inj_hook_key(port, i);
		if (!bpf_map_lookup_elem(bpf_map__fd(inj_maps(c)->maps.inj_hooks), &hk, &hv) &&
		    (hv.flags & INJ_HOOK_TRACE)) {
			snprintf(why, len, "a trace reads its port %s (stop it first)", name);
			return 1;
		}
	}
	return 0;
}

/* rdma-inject forward stop: the forwarder taken down and nothing else (the
 * host's other rules and hooks stay): its XDP programs, the peers' pass-all
 * ones, its slow path, the qdiscs it made, its ports' hooks, its tables.
 * Refused while a rule or a trace uses one of its ports */
static int fwd_stop(int json_out, const char *pin_root)
{
	static const char *const pins[] = { "inj_fwd_ports", "inj_fwd_flood", "inj_fwd_peer",
					    "inj_fwd_macs", "inj_fwd_names", NULL };
	uint32_t key, next, own, ports[512], peers[512];
	int fd, first = 1, np = 0, npeer = 0, i;
	struct inj_ctx *c;
	char why[128], path[512];

	c = fwd_open_running(pin_root, "forward stop");
	if (!c)
		return 1;
	fd = bpf_map__fd(inj_maps(c)->maps.inj_owned);
	while (np < 512 && npeer < 512 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = 0;
		key = next;
		own = inj_owned_get(c, key);
		if (own & INJ_OWN_XDP)
			ports[np++] = key;
		if (own & INJ_OWN_XDP_PEER)
			peers[npeer++] = key;
	}
	for (i = 0; i < np; i++)
		if (fwd_in_use(c, ports[i], why, sizeof(why))) {
			log_err("forward stop: %s", why);
			inj_close(c);
			return 1;
		}
	for (i = 0; i < np; i++)
		port_down(c, ports[i], inj_owned_get(c, ports[i]) & (INJ_OWN_PRIO | INJ_OWN_CLSACT));
	for (i = 0; i < npeer; i++) {
		bpf_xdp_detach((int)peers[i], XDP_FLAGS_DRV_MODE, NULL);
		inj_owned_set(c, peers[i], inj_owned_get(c, peers[i]) & ~INJ_OWN_XDP_PEER);
	}
	for (i = 0; pins[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", c->pin_root, pins[i]);
		unlink(path);
	}
	inj_close(c);
	if (json_out)
		printf("{\"schema_version\":1,\"stopped\":%d}\n", np);
	else
		printf("forwarding stopped on %d port(s)\n", np);
	return 0;
}

/* the running forwarder's pinned map NAME: its fd, or -1 */
static int fwd_map(const char *pin_root, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", pin_root, name);
	return bpf_obj_get(path);
}

/* the forwarder's programs, from a port still in it (slot live): XDP's and
 * its mode, the flood's egress one, the slow path's; 0 or -errno */
static int fwd_progs(int ports, int flood, uint32_t live, int prog[3], uint32_t *mode)
{
	LIBBPF_OPTS(bpf_tc_hook, h, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = INJ_FWD_TC_HANDLE, .priority = INJ_FWD_TC_HANDLE);
	struct bpf_devmap_val v, fv;
	uint32_t id = 0;

	if (bpf_map_lookup_elem(ports, &live, &v) || bpf_map_lookup_elem(flood, &live, &fv))
		return -ENOENT;
	*mode = XDP_FLAGS_DRV_MODE;
	if (bpf_xdp_query_id((int)v.ifindex, XDP_FLAGS_DRV_MODE, &id) || !id) {
		*mode = XDP_FLAGS_SKB_MODE;
		if (bpf_xdp_query_id((int)v.ifindex, XDP_FLAGS_SKB_MODE, &id) || !id)
			return -ENOENT;
	}
	h.ifindex = (int)v.ifindex;
	if (bpf_tc_query(&h, &o))
		return -ENOENT;
	prog[0] = bpf_prog_get_fd_by_id(id);
	prog[1] = bpf_prog_get_fd_by_id(fv.bpf_prog.id);
	prog[2] = bpf_prog_get_fd_by_id(o.prog_id);
	return prog[0] < 0 || prog[1] < 0 || prog[2] < 0 ? -errno : 0;
}

/* the new device in slot's place: device maps, the MAC table's and the peer
 * table's entries of the old one; 0 or -errno */
static int fwd_reslot(const char *pin_root, uint32_t slot, uint32_t old, uint32_t ifx,
		      int eg_prog, uint32_t other, uint32_t other_slot, int nports)
{
	int ports = fwd_map(pin_root, "inj_fwd_ports"), flood = fwd_map(pin_root, "inj_fwd_flood");
	int macs = fwd_map(pin_root, "inj_fwd_macs"), peer = fwd_map(pin_root, "inj_fwd_peer");
	struct bpf_devmap_val v = { .ifindex = ifx };
	struct inj_fwd_mac k, nk;
	struct inj_fwd_to to;
	int r = 0, first = 1;

	if (bpf_map_update_elem(ports, &slot, &v, BPF_ANY))
		r = -errno;
	v.bpf_prog.fd = eg_prog;
	if (!r && bpf_map_update_elem(flood, &slot, &v, BPF_ANY))
		r = -errno;
	while (!r && !bpf_map_get_next_key(macs, first ? NULL : &k, &nk)) {
		first = 0;
		k = nk;
		if (!bpf_map_lookup_elem(macs, &k, &to) && to.slot == slot) {
			to.ifindex = ifx;
			if (bpf_map_update_elem(macs, &k, &to, BPF_EXIST))
				r = -errno;
		}
	}
	if (!r && nports == 2) {	/* two ports: each one's peer */
		struct inj_fwd_peer a = { .in = ifx, .to = { other, other_slot } };
		struct inj_fwd_peer b = { .in = other, .to = { ifx, slot } };
		uint32_t ka = ifx & (INJ_FWD_PEER_IDX - 1), kb = other & (INJ_FWD_PEER_IDX - 1);
		uint32_t ko = old & (INJ_FWD_PEER_IDX - 1);
		struct inj_fwd_peer zero = { 0 };

		if (old && ko != ka && ko != kb)
			bpf_map_update_elem(peer, &ko, &zero, BPF_ANY);
		if (bpf_map_update_elem(peer, &ka, &a, BPF_ANY) ||
		    bpf_map_update_elem(peer, &kb, &b, BPF_ANY))
			r = -errno;
	}
	close(ports);
	close(flood);
	close(macs);
	close(peer);
	return r;
}

/*
 * rdma-inject forward port PORT: PORT came back as a new device (a VM's tap
 * after its reboot) and the running forwarder takes it in where the port of
 * that name was: its slot in the device maps, the MAC table's entries, the
 * peer table, the XDP program in the same mode, the slow path. The old
 * device's marks and hooks go; rules that were on it stay listed until
 * deleted (they match nothing).
 */
static int fwd_port(const char *name, int json_out, const char *pin_root)
{
	struct inj_ctx *c;
	struct inj_fwd_name nm;
	struct bpf_devmap_val v;
	uint32_t ifx = if_nametoindex(name), slot = INJ_FWD_MAX_PORTS, i, live = 0, old = 0;
	uint32_t mode, key, next, other = 0, other_slot = 0;
	int names = -1, ports = -1, flood = -1, prog[3] = { -1, -1, -1 }, n = 0, r = -ENOENT;
	int first = 1, fd;
	const char *why = "";

	if (!ifx) {
		log_err("forward port: %s: no such device", name);
		return 2;
	}
	c = fwd_open_running(pin_root, "forward port");
	if (!c)
		return 1;
	names = fwd_map(c->pin_root, "inj_fwd_names");
	ports = fwd_map(c->pin_root, "inj_fwd_ports");
	flood = fwd_map(c->pin_root, "inj_fwd_flood");
	for (i = 0; i < INJ_FWD_MAX_PORTS; i++) {
		int has = !bpf_map_lookup_elem(ports, &i, &v);

		if (bpf_map_lookup_elem(names, &i, &nm) || !nm.name[0])
			continue;
		n++;
		if (!strcmp(nm.name, name)) {
			slot = i;
			old = has ? v.ifindex : 0;
		} else if (has) {
			live = i;
			other = v.ifindex;
			other_slot = i;
		}
	}
	if (slot == INJ_FWD_MAX_PORTS)
		why = "not a port of the forwarder";
	else if (old == ifx)
		why = "in the forwarder already";
	else if (!other)
		why = "no other port of the forwarder is left";
	else if ((r = fwd_progs(ports, flood, live, prog, &mode)))
		why = "cannot read the forwarder's programs from its other ports";
	if (*why) {
		log_err("forward port: %s: %s", name, why);
		r = -EINVAL;
		goto out;
	}
	/* the old device's marks and hooks (gone with it, or left over) */
	fd = bpf_map__fd(inj_maps(c)->maps.inj_owned);
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		char nb[IF_NAMESIZE];

		first = 0;
		key = next;
		if ((key == old || !if_indextoname(key, nb)) && (inj_owned_get(c, key) & INJ_OWN_XDP))
			port_down(c, key, inj_owned_get(c, key) & (INJ_OWN_PRIO | INJ_OWN_CLSACT));
	}
	r = inj_hook_register(c, inj_hook_key(ifx, INJ_DIR_INGRESS)) ?:
	    inj_hook_register(c, inj_hook_key(ifx, INJ_DIR_EGRESS)) ?:
	    fwd_reslot(c->pin_root, slot, old, ifx, prog[1], other, other_slot, n);
	if (!r) {
		struct fwd_args a = { .port = { ifx }, .nports = 1 };

		inj_owned_set(c, ifx, inj_owned_get(c, ifx) | INJ_OWN_XDP);
		r = slow_attach(c, &a, prog[2]);
		if (!r && bpf_xdp_attach((int)ifx, prog[0], mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL))
			r = -errno;
		if (r)
			port_down(c, ifx, a.made_clsact[0] ? INJ_OWN_CLSACT : 0);
	}
	if (r)
		log_err("forward port: %s: %s", name, strerror(-r));
	else if (json_out)
		printf("{\"schema_version\":1,\"port\":\"%s\",\"slot\":%u,\"mode\":\"%s\"}\n", name,
		       slot, mode == XDP_FLAGS_DRV_MODE ? "native" : "generic");
	else
		printf("%s taken in again (slot %u, %s XDP)\n", name, slot,
		       mode == XDP_FLAGS_DRV_MODE ? "native" : "generic");
out:
	for (i = 0; i < 3; i++)
		if (prog[i] >= 0)
			close(prog[i]);
	close(names);
	close(ports);
	close(flood);
	inj_close(c);
	return r ? (r == -EINVAL ? 2 : 1) : 0;
}

int cmd_forward(int argc, char **argv, int json_out, const char *pin_root)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct fwd_args a = { .nports = 0 };
	struct forward_bpf *s = NULL;
	struct inj_ctx *c;
	const char *mode = "";
	int r, i, peers = 0;

	if (argc == 1 && !strcmp(argv[0], "stop"))
		return fwd_stop(json_out, pin_root);
	if (argc == 2 && !strcmp(argv[0], "port"))
		return fwd_port(argv[1], json_out, pin_root);
	r = fwd_parse(argc, argv, &a);
	if (r)
		return r;
	c = inj_open(pin_root);
	if (!c) {
		log_err("forward: cannot load the injector: %s", strerror(errno));
		return 1;
	}
	oo.pin_root_path = c->pin_root;
	if (fwd_running(c->pin_root)) {
		log_err("forward: a forwarder runs on this host already (rdma-inject flush ends it)");
		inj_close(c);
		return 1;
	}
	s = forward_bpf__open_opts(&oo);
	r = s ? forward_bpf__load(s) : -errno;
	for (i = 0; !r && i < a.nports; i++)
		r = inj_hook_register(c, inj_hook_key(a.port[i], INJ_DIR_INGRESS)) ?:
		    inj_hook_register(c, inj_hook_key(a.port[i], INJ_DIR_EGRESS));
	if (!r)
		r = fwd_tables(s, &a);
	if (!r) {
		for (i = 0; i < a.nports; i++)	/* flush takes it down */
			inj_owned_set(c, a.port[i], inj_owned_get(c, a.port[i]) | INJ_OWN_XDP);
		r = slow_attach(c, &a, bpf_program__fd(s->progs.inj_fwd_slow));
		if (!r)
			r = attach_all(&a, bpf_program__fd(s->progs.inj_fwd), &mode);
		r = r < 0 ? r : 0;
		if (!r)
			peers = peers_pass(c, &a, bpf_program__fd(s->progs.inj_fwd_pass));
	}
	if (r) {
		log_err("forward: %s", strerror(-r));
		fwd_undo(c, s, &a);
		forward_bpf__destroy(s);
		inj_close(c);
		return 1;
	}
	if (json_out) {
		printf("{\"schema_version\":1,\"mode\":\"%s\",\"ports\":[", mode);
		for (i = 0; i < a.nports; i++)
			printf("%s\"%s\"", i ? "," : "", a.name[i]);
		printf("],\"macs\":%d,\"veth_peers_napi\":%d}\n", a.nmacs, peers);
	} else {
		printf("forwarding");
		for (i = 0; i < a.nports; i++)
			printf(" %s", a.name[i]);
		printf(" (%s XDP%s)\n", mode, a.nports > 2 ? ", by MAC" : "");
		if (peers)
			printf("%d veth peer(s) given a pass-all XDP program: they take redirected "
			       "frames only with NAPI on\n", peers);
	}
	forward_bpf__destroy(s);	/* the programs stay attached, the maps pinned */
	inj_close(c);
	return 0;
}
