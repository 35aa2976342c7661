// SPDX-License-Identifier: MIT
/*
 * The queue that holds delayed and reordered packets, built with libnl-route
 * (no shelling out to tc). The BPF program decides which packet and for how
 * long; these qdiscs only hold them:
 *
 *   root  prio 1: bands 3, every priority -> band 1:2 (the normal path)
 *   1:1   fq      EDT: a packet leaves at its skb->tstamp (DELAY rules)
 *   1:2   pfifo   (prio's default child)
 *   1:3   netem   delay HOLD: packets steered here are overtaken (REORDER rules)
 *
 * The numbers are the contract of ebpf/inject_abi.h (INJ_PRIO_MAJOR,
 * INJ_BAND_*): the program steers with skb->priority.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netlink/netlink.h>
#include <netlink/route/tc.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/prio.h>
#include <netlink/route/qdisc/netem.h>
#include <linux/pkt_sched.h>
#include "inj.h"

int qdisc_prio_ensure(uint32_t ifindex, uint64_t hold_ns, char *err, size_t errlen);
int qdisc_prio_remove(uint32_t ifindex);

static struct nl_sock *sock_open(void)
{
	struct nl_sock *s = nl_socket_alloc();

	if (s && nl_connect(s, NETLINK_ROUTE)) {
		nl_socket_free(s);
		return NULL;
	}
	return s;
}

/* the device's root qdisc: 1 ours (prio 1:), 0 the kernel's default
 * (handle 0:) or none, -1 someone else's (kind in kind) */
static int root_owner(struct nl_sock *s, uint32_t ifindex, char *kind, size_t len)
{
	struct nl_cache *cache;
	struct rtnl_qdisc *q;
	int who = 0;

	snprintf(kind, len, "?");
	if (rtnl_qdisc_alloc_cache(s, &cache))
		return 0;
	q = rtnl_qdisc_get_by_parent(cache, (int)ifindex, TC_H_ROOT);
	if (q) {
		uint32_t h = rtnl_tc_get_handle(TC_CAST(q));

		snprintf(kind, len, "%s", rtnl_tc_get_kind(TC_CAST(q)));
		if (h == TC_HANDLE(INJ_PRIO_MAJOR, 0) && !strcmp(kind, "prio"))
			who = 1;
		else if (h)
			who = -1;	/* a user's qdisc (tc gives it a handle) */
		rtnl_qdisc_put(q);
	}
	nl_cache_free(cache);
	return who;
}

static int add(struct nl_sock *s, uint32_t ifindex, uint32_t parent, uint32_t handle,
	       const char *kind, uint64_t hold_ns, int flags)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int r;

	if (!q)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), (int)ifindex);
	rtnl_tc_set_parent(TC_CAST(q), parent);
	rtnl_tc_set_handle(TC_CAST(q), handle);
	r = rtnl_tc_set_kind(TC_CAST(q), kind);
	if (!r && !strcmp(kind, "prio")) {
		uint8_t map[TC_PRIO_MAX + 1];

		memset(map, 1, sizeof(map));	/* everything to 1:2 unless steered */
		rtnl_qdisc_prio_set_bands(q, 3);
		r = rtnl_qdisc_prio_set_priomap(q, map, sizeof(map));
	} else if (!r && !strcmp(kind, "netem")) {
		rtnl_netem_set_delay(q, (int)(hold_ns / 1000));
		rtnl_netem_set_limit(q, 10000);
	}
	if (!r)
		r = rtnl_qdisc_add(s, q, flags);
	rtnl_qdisc_put(q);
	return r;
}

int qdisc_prio_ensure(uint32_t ifindex, uint64_t hold_ns, char *err, size_t errlen)
{
	struct nl_sock *s = sock_open();
	char kind[32];
	int r;

	if (!s) {
		snprintf(err, errlen, "netlink: cannot open a route socket");
		return -EIO;
	}
	switch (root_owner(s, ifindex, kind, sizeof(kind))) {
	case 1:
		nl_socket_free(s);
		return 0;
	case -1:	/* never replaced (flush would then have deleted it) */
		snprintf(err, errlen, "the device has a root qdisc of its own (%s): delay and reorder "
			 "need rdma-inject's prio root there; remove it, or put the rule on another "
			 "port", kind);
		nl_socket_free(s);
		return -EBUSY;
	}
	if (!hold_ns)
		hold_ns = 1000000;
	r = add(s, ifindex, TC_H_ROOT, TC_HANDLE(INJ_PRIO_MAJOR, 0), "prio", 0, NLM_F_CREATE | NLM_F_REPLACE);
	if (r) {
		snprintf(err, errlen, "cannot install the prio root qdisc: %s%s", nl_geterror(r),
			 r == -NLE_OBJ_NOTFOUND || r == -NLE_OPNOTSUPP ?
				 " (sch_prio missing in this kernel?)" : "");
		nl_socket_free(s);
		return -EOPNOTSUPP;
	}
	r = add(s, ifindex, TC_HANDLE(INJ_PRIO_MAJOR, INJ_BAND_DELAY), TC_HANDLE(0x10, 0), "fq", 0, NLM_F_CREATE);
	if (r) {
		snprintf(err, errlen, "cannot add fq (EDT delay) under 1:1: %s "
			 "(sch_fq missing in this kernel?)", nl_geterror(r));
		goto undo;
	}
	r = add(s, ifindex, TC_HANDLE(INJ_PRIO_MAJOR, INJ_BAND_REORDER), TC_HANDLE(0x30, 0), "netem", hold_ns, NLM_F_CREATE);
	if (r) {
		snprintf(err, errlen, "cannot add netem (reorder hold) under 1:3: %s "
			 "(sch_netem missing in this kernel?)", nl_geterror(r));
		goto undo;
	}
	nl_socket_free(s);
	return 1;
undo:
	nl_socket_free(s);
	qdisc_prio_remove(ifindex);
	return -EOPNOTSUPP;
}

int qdisc_prio_remove(uint32_t ifindex)
{
	struct nl_sock *s = sock_open();
	struct rtnl_qdisc *q;
	char kind[32];
	int r;

	if (!s)
		return -EIO;
	if (root_owner(s, ifindex, kind, sizeof(kind)) != 1) {
		nl_socket_free(s);
		return 0;
	}
	q = rtnl_qdisc_alloc();
	rtnl_tc_set_ifindex(TC_CAST(q), (int)ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	rtnl_tc_set_handle(TC_CAST(q), TC_HANDLE(INJ_PRIO_MAJOR, 0));
	r = rtnl_qdisc_delete(s, q);
	rtnl_qdisc_put(q);
	nl_socket_free(s);
	return r ? -EIO : 0;
}

/* every qdisc the injector may have installed (clsact, prio, fq, netem), on
 * any device: what `rdma-inject list` shows, and what flush must leave empty */
int qdisc_scan(void (*cb)(uint32_t ifindex, const char *kind, uint32_t handle, void *arg),
	       void *arg);

struct scan_arg {
	void (*cb)(uint32_t, const char *, uint32_t, void *);
	void *arg;
};

static void scan_one(struct nl_object *o, void *p)
{
	static const char *const kinds[] = { "clsact", "prio", "fq", "netem", NULL };
	struct rtnl_tc *tc = (struct rtnl_tc *)o;
	struct scan_arg *a = p;
	const char *kind = rtnl_tc_get_kind(tc);
	int i;

	for (i = 0; kind && kinds[i]; i++)
		if (!strcmp(kind, kinds[i]))
			a->cb((uint32_t)rtnl_tc_get_ifindex(tc), kind, rtnl_tc_get_handle(tc), a->arg);
}

int qdisc_scan(void (*cb)(uint32_t ifindex, const char *kind, uint32_t handle, void *arg),
	       void *arg)
{
	struct scan_arg a = { cb, arg };
	struct nl_sock *s = sock_open();
	struct nl_cache *cache;

	if (!s)
		return -EIO;
	if (rtnl_qdisc_alloc_cache(s, &cache)) {
		nl_socket_free(s);
		return -EIO;
	}
	nl_cache_foreach(cache, scan_one, &a);
	nl_cache_free(cache);
	nl_socket_free(s);
	return 0;
}

/*
 * Which of prio, fq and netem this kernel has, tried rather than looked up
 * (a kernel without /lib/modules says nothing of its built-in qdiscs): each
 * installed as the root qdisc of "lo" in a network namespace of a child's
 * own, which goes with it, so nothing of the host's is touched. Bits: 1
 * prio, 2 fq, 4 netem; -1 when it cannot be tried (no CAP_SYS_ADMIN).
 */
int qdisc_kinds_work(void)
{
	static const char *const kinds[] = { "prio", "fq", "netem" };
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		struct nl_sock *s;
		int mask = 0, i;

		if (unshare(CLONE_NEWNET) || !(s = sock_open()))
			_exit(255);
		for (i = 0; i < 3; i++)
			if (!add(s, 1, TC_H_ROOT, TC_HANDLE(0x70 + i, 0), kinds[i], 1000000,
				 NLM_F_CREATE | NLM_F_REPLACE))
				mask |= 1 << i;
		nl_socket_free(s);
		_exit(mask);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}
