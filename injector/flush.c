// SPDX-License-Identifier: MIT
/*
 * rdma-inject flush (inj_int.h): every hook and qdisc of ours removed,
 * the maps and pins gone, whatever state an earlier run left.
 */
#include <dirent.h>
#include <signal.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "inj_int.h"
#include "../lib/clock.h"

/* flush under the state lock */
static int flush_locked(const char *root)
{
	uint32_t ifx[512], key, next;
	int dirs[512], n, i, fd, first = 1, r = 0;
	char path[512];
	struct inj_ctx tmp = { .lock = -1 };

	/* the qdiscs we made are recorded in inj_owned: found before the
	 * filters go (without pins it is found through their program) */
	fd = inj_owned_map_fd(root);
	/* every filter of ours, on every device, whatever the maps say */
	n = inj_hook_list(&tmp, ifx, dirs, 512);
	for (i = 0; i < n; i++) {
		int e = inj_hook_detach(ifx[i], dirs[i]);

		if (e && !r)
			r = e;
	}
	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		uint32_t own = 0;

		first = 0;
		key = next;
		bpf_map_lookup_elem(fd, &key, &own);
		if (own & INJ_OWN_XDP) {	/* rdma-inject forward's, either mode */
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)key, .attach_point = BPF_TC_INGRESS);
			LIBBPF_OPTS(bpf_tc_opts, o, .handle = INJ_FWD_TC_HANDLE, .priority = INJ_FWD_TC_HANDLE);

			bpf_xdp_detach((int)key, XDP_FLAGS_DRV_MODE, NULL);
			bpf_xdp_detach((int)key, XDP_FLAGS_SKB_MODE, NULL);
			bpf_tc_detach(&hook, &o);	/* its slow path (the clsact may be the host's) */
		}
		if (own & INJ_OWN_XDP_PEER)
			bpf_xdp_detach((int)key, XDP_FLAGS_DRV_MODE, NULL);
		if (own & INJ_OWN_PRIO)
			qdisc_prio_remove(key);
		if (own & INJ_OWN_CLSACT) {
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)key,
				    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
			bpf_tc_hook_destroy(&hook);	/* gone with its device: fine */
		}
	}
	if (fd >= 0)
		close(fd);
	/* every pin of ours, also those of older versions (other map names):
	 * only ever in a bpffs directory, so that no --pin can point this at
	 * files that are not BPF objects */
	if (!inj_is_bpffs(root))
		return r ? r : (access(root, F_OK) ? 0 : -ENOTDIR);
	{
		DIR *d = opendir(root);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
			if (unlink(path) && errno != ENOENT && !r)
				r = -errno;
		}
		if (d)
			closedir(d);
	}
	if (rmdir(root) && errno != ENOENT && !r)
		r = -errno;
	return r;
}

struct map_want {
	const char *name;
	int fd;
};

static void dup_if_named(int mfd, const char *name, void *arg)
{
	struct map_want *w = arg;

	if (!strcmp(name, w->name) && w->fd < 0)
		w->fd = dup(mfd);
}

/* one of our maps, by its pin or through our attached program; -1 if none */
static int map_by_name(const char *root, const char *name)
{
	struct map_want w = { name, -1 };
	char path[512];
	uint32_t id;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	w.fd = bpf_obj_get(path);
	if (w.fd < 0 && (id = inj_our_prog_id()))
		inj_for_prog_maps(id, dup_if_named, &w);
	return w.fd;
}

/* a trace that reads the ring (its rdma-inject alive): its pid, else 0 */
uint32_t inj_trace_owner(const char *root)
{
	struct inj_cfg cfg;
	uint32_t zero = 0, pid = 0;
	int fd = map_by_name(root, "inj_cfg");

	if (fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &cfg) && cfg.trace_pid &&
	    (!kill((pid_t)cfg.trace_pid, 0) || errno == EPERM))
		pid = cfg.trace_pid;
	if (fd >= 0)
		close(fd);
	return pid;
}

/* any live rule in the table: one whose lease ran out (its owner died
 * without removing it) is not one -- the BPF program already ignores it */
static int rules_present(const char *root)
{
	struct inj_rule r;
	uint64_t now = rtb_now_ns(), dl;
	uint32_t i;
	int fd = map_by_name(root, "inj_rules"), lfd = -1, any = 0;

	for (i = 0; fd >= 0 && i < INJ_MAX_RULES && !any; i++) {
		if (bpf_map_lookup_elem(fd, &i, &r) || !r.id)
			continue;
		if (r.lease_ns) {
			if (lfd < 0)
				lfd = map_by_name(root, "inj_leases");
			if (lfd < 0 || bpf_map_lookup_elem(lfd, &r.id, &dl) || now >= dl)
				continue;
		}
		any = 1;
	}
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return any || inj_trace_owner(root);	/* a trace's hooks are in use too */
}

int inj_flush_if(const char *pin_root, int only_if_empty)
{
	const char *root = pin_root ? pin_root : INJ_PIN_DIR;
	int lock = inj_state_lock(), r = 0;

	if (lock < 0)
		return lock;
	/* checked and done under one lock: a rule added in between is never flushed */
	if (!only_if_empty || !rules_present(root))
		r = flush_locked(root);
	close(lock);
	return r;
}

int inj_flush(const char *pin_root)
{
	return inj_flush_if(pin_root, 0);
}
