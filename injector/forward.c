// SPDX-License-Identifier: MIT
/*
 * rdma-inject forward PORT PORT... [mac MAC=PORT]...: the injector as a
 * bump in the wire (forward.bpf.c). Two ports forward to each other; more
 * forward by the MAC table given, and flood what it does not name. Each
 * port's XDP program runs native where its driver has XDP, else generic,
 * the same mode on every port; the mode is said. The ports' hooks are the
 * tc program's, registered alike: `add dev PORT ingress|egress RULE` puts
 * rules there, `stats` counts, `trace` traces. `flush` takes it down.
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

/* the device maps (a port's slot: its place on the command line), the peer
 * table (two ports) and the MAC table: 0 or -errno */
static int fwd_tables(struct forward_bpf *s, const struct fwd_args *a)
{
	int ports = bpf_map__fd(s->maps.inj_fwd_ports), flood = bpf_map__fd(s->maps.inj_fwd_flood);
	struct bpf_devmap_val v;
	uint32_t i;

	for (i = 0; i < (uint32_t)a->nports; i++) {
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

/* a forward that failed half-way taken back: its slow filters, the clsacts
 * it made, its marks, hooks and device map entries (attach_all took its
 * XDP programs back) */
static void fwd_undo(struct inj_ctx *c, struct forward_bpf *s, const struct fwd_args *a)
{
	for (uint32_t i = 0; i < (uint32_t)a->nports; i++) {
		LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = (int)a->port[i], .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, o, .handle = INJ_FWD_TC_HANDLE, .priority = INJ_FWD_TC_HANDLE);
		uint32_t own = inj_owned_get(c, a->port[i]);

		bpf_tc_detach(&h, &o);
		if (a->made_clsact[i]) {
			h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&h);
			own &= ~INJ_OWN_CLSACT;
		}
		inj_owned_set(c, a->port[i], own & ~INJ_OWN_XDP);
		inj_hook_gc(c, a->port[i], INJ_DIR_INGRESS);
		inj_hook_gc(c, a->port[i], INJ_DIR_EGRESS);
		if (s)
			bpf_map_delete_elem(bpf_map__fd(s->maps.inj_fwd_ports), &i);
	}
}

int cmd_forward(int argc, char **argv, int json_out, const char *pin_root)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct fwd_args a = { .nports = 0 };
	struct forward_bpf *s = NULL;
	struct inj_ctx *c;
	const char *mode = "";
	int r, i, peers = 0;

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
