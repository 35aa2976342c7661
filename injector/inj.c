// SPDX-License-Identifier: MIT
/*
 * Maps, hooks and the candidate masks of the injector (see inject_abi.h).
 * One skeleton per direction is loaded (its rodata says which); both reuse
 * the maps pinned under the pin root, so every hook shares one table.
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
#include "inj.h"
#include "../lib/clock.h"
#include "../lib/fnv.h"
#include "inject.skel.h"

_Static_assert(sizeof(struct inj_rule) == 152, "inj_rule layout");
_Static_assert(sizeof(struct inj_rule_ctr) == 72, "inj_rule_ctr layout");
_Static_assert(sizeof(struct inj_hook_ctr) == 56, "inj_hook_ctr layout");
_Static_assert(sizeof(struct inj_cfg) == 56, "inj_cfg layout");
_Static_assert(INJ_ITAB_SEGS >= 2 * INJ_MAX_RULES + 1, "an interval table holds every rule's ends");
_Static_assert(sizeof(struct inj_trace_hdr) == 32, "inj_trace_hdr layout");

struct inj_ctx {
	char pin_root[256];
	struct inject_bpf *skel[2];	/* per direction, loaded on first use */
	int prog[2];	/* per direction, the pinned tc program when reused (else 0) */
	int ncpu;
	int lock;	/* INJ_LOCK_PATH, held (flock) from inj_open to inj_close */
};

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
static int state_lock(void)
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

int qdisc_prio_ensure(uint32_t ifindex, uint64_t hold_ns, char *err, size_t errlen);
int qdisc_prio_remove(uint32_t ifindex);

/* the id of the program of one of our tc filters on this host (in this
 * network namespace), 0 when none is attached: the first hook of
 * inj_hook_list, asked for its program */
static uint32_t our_prog_id(void)
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
static void for_prog_maps(uint32_t prog_id, void (*fn)(int, const char *, void *), void *arg)
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
	if (access(path, F_OK) && (id = our_prog_id()))	/* pinned: libbpf reuses them */
		for_prog_maps(id, reuse_one, s);
}

static void dup_if_owned(int mfd, const char *name, void *arg)
{
	if (!strcmp(name, "inj_owned") && *(int *)arg < 0)
		*(int *)arg = dup(mfd);
}

/* the inj_owned map: pinned, or found through our attached program */
static int owned_map_fd(const char *root)
{
	char path[512];
	uint32_t id;
	int fd;

	snprintf(path, sizeof(path), "%s/inj_owned", root);
	fd = bpf_obj_get(path);
	if (fd < 0 && (id = our_prog_id()))
		for_prog_maps(id, dup_if_owned, &fd);
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
static struct inject_bpf *maps(struct inj_ctx *c)
{
	return c->skel[0] ? c->skel[0] : c->skel[1];
}

/* path is a directory on a BPF filesystem */
static int is_bpffs(const char *path)
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

static int rule_read(struct inj_ctx *c, uint32_t slot, struct inj_rule *r);

/* rules whose lease ran out (their owner died without removing them): the
 * program already ignores them; every command's open removes them */
static void leases_gc(struct inj_ctx *c)
{
	struct inj_rule r;
	uint64_t now = rtb_now_ns(), dl;
	uint32_t i, id;

	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (rule_read(c, i, &r) || !r.id || !r.lease_ns)
			continue;
		id = r.id;
		if (bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_leases), &id, &dl) || now >= dl)
			inj_rule_del(c, id);
	}
}

struct inj_ctx *inj_open(const char *pin_root)
{
	struct inj_ctx *c = calloc(1, sizeof(*c));
	int made;

	if (!c)
		return NULL;
	if ((c->lock = state_lock()) < 0) {
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
	if (!is_bpffs(c->pin_root)) {	/* a directory made elsewhere: not ours to use */
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
	return bpf_program__fd(maps(c)->progs.inj_empty);
}

static int rule_read(struct inj_ctx *c, uint32_t slot, struct inj_rule *r)
{
	return bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_rules), &slot, r) ? -errno : 0;
}

static int find_slot(struct inj_ctx *c, uint32_t id, struct inj_rule *r)
{
	uint32_t i;

	for (i = 0; i < INJ_MAX_RULES; i++)
		if (!rule_read(c, i, r) && r->id && r->id == id)
			return (int)i;
	return -ENOENT;
}

/*
 * The keys of the hooks map, read in one walk and used after it: updating
 * an element of a hash map puts a new one at the head of its bucket, so
 * an update during a get_next_key walk sent it round two keys of one
 * bucket for ever (an add spun holding the lock until the agent killed it
 * after 60 s; the map's hash seed is random, so it happened now and then:
 * CI t11). Never update while walking.
 */
static int hook_keys(int hfd, uint32_t keys[INJ_MAX_HOOKS])
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
static int hook_put(struct inj_ctx *c, uint32_t hk, const struct inj_hook *hv, uint64_t flags)
{
	struct inject_bpf *s = maps(c);
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
	struct inject_bpf *s = maps(c);
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

/* one field's range in a rule: restricts (1) or not (0) */
struct span {
	uint64_t lo, hi;
};

static int field_span(const struct inj_rule *r, int f, struct span *v)
{
	switch (f) {
	case INJ_F_QPN:
		*v = (struct span){ r->qpn_lo, r->qpn_hi };
		return r->qpn_lo > 0 || r->qpn_hi < 0xffffff;
	case INJ_F_OPCODE:
		*v = (struct span){ (uint64_t)r->opcode, (uint64_t)r->opcode };
		return r->opcode >= 0;
	case INJ_F_PSN:
	case INJ_F_RPSN:
		*v = (struct span){ r->psn_lo, r->psn_hi };
		return !(r->rel & INJ_REL_PSN) == (f == INJ_F_PSN) &&
		       (r->psn_lo > 0 || r->psn_hi < 0xffffff);
	case INJ_F_LEN:
		*v = (struct span){ r->len_min, r->len_max };
		return r->len_min > 0 || r->len_max < 0xffff;	/* an IP length's range */
	case INJ_F_SRC:
		*v = (struct span){ r->src_ip, r->src_ip };
		return r->src_ip != 0;
	case INJ_F_DST:
		*v = (struct span){ r->dst_ip, r->dst_ip };
		return r->dst_ip != 0;
	case INJ_F_QIDX:
		*v = (struct span){ r->qp_lo, r->qp_hi };
		return !!(r->rel & INJ_REL_QP);
	case INJ_F_TX:
		*v = (struct span){ r->tx_lo, r->tx_hi };
		return !!(r->rel & INJ_REL_TX);
	case INJ_F_TIME:
		*v = (struct span){ r->start_ns, r->stop_ns ? r->stop_ns - 1 : UINT64_MAX - 1 };
		return r->start_ns || r->stop_ns;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Field f's interval table for the rules in `in` (bit i: slot i, r[i] its
 * rule): 1 when some rule restricts the field (the table is needed), 0
 * when none does. A window that ends at or before it starts covers nothing.
 */
static int itab_build(struct inj_itab *t, int f, const struct inj_rule *r, uint64_t in)
{
	uint64_t ends[2 * INJ_MAX_RULES + 1];
	struct span v[INJ_MAX_RULES];
	uint64_t restr = 0;
	int n = 0, m = 0, i, j;

	ends[n++] = 0;
	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (!(in & (1ULL << i)) || !field_span(&r[i], f, &v[i]))
			continue;
		restr |= 1ULL << i;
		if (v[i].lo > v[i].hi)
			continue;
		if (v[i].lo < INJ_ITAB_PAD)	/* one from there on never matches */
			ends[n++] = v[i].lo;
		if (v[i].hi < INJ_ITAB_PAD - 1)	/* to the end: no end */
			ends[n++] = v[i].hi + 1;
	}
	if (!restr)
		return 0;
	qsort(ends, (size_t)n, sizeof(ends[0]), cmp_u64);
	for (i = 0; i < n; i++)
		if (!m || ends[i] != t->lo[m - 1])
			t->lo[m++] = ends[i];
	/* the 4-way search's first step: levels of 4 reach 4 * top segments */
	for (t->top = 1; t->top * 4 < (uint32_t)m; t->top *= 4)
		;
	if (m == 1)
		t->top = 0;
	for (j = 0; j < m; j++) {
		uint64_t mask = in & ~restr;

		for (i = 0; i < INJ_MAX_RULES; i++)
			if ((restr & (1ULL << i)) && v[i].lo <= t->lo[j] && t->lo[j] <= v[i].hi)
				mask |= 1ULL << i;
		t->mask[j] = mask;
	}
	for (j = m; j < INJ_ITAB_SEGS; j++) {
		t->lo[j] = INJ_ITAB_PAD;
		t->mask[j] = 0;
	}
	return 1;
}

/*
 * Field f's radix table (inject_abi.h) for the rules in `in`: 1 when some
 * rule restricts the field, 0 when none does. Ranges are cut to the
 * table's values (0..INJ_RADIX_MAX).
 */
static int rtab_build(struct inj_rtab *t, int f, const struct inj_rule *r, uint64_t in)
{
	uint64_t restr = 0, all;
	struct span v;
	uint32_t h, l;
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < INJ_MAX_RULES; i++) {
		uint64_t bit = 1ULL << i;
		uint32_t ah, al, bh, bl;

		if (!(in & bit) || !field_span(&r[i], f, &v))
			continue;
		restr |= bit;
		if (v.lo > v.hi || v.lo > INJ_RADIX_MAX)
			continue;	/* covers no value the table holds */
		if (v.hi > INJ_RADIX_MAX)
			v.hi = INJ_RADIX_MAX;
		ah = (uint32_t)(v.lo >> INJ_RADIX_BITS);
		al = (uint32_t)(v.lo & (INJ_RADIX_N - 1));
		bh = (uint32_t)(v.hi >> INJ_RADIX_BITS);
		bl = (uint32_t)(v.hi & (INJ_RADIX_N - 1));
		if (ah == bh) {
			t->hi[ah].ab |= bit;
		} else {
			t->hi[ah].a |= bit;
			t->hi[bh].b |= bit;
			for (h = ah + 1; h < bh; h++)
				t->hi[h].f |= bit;
		}
		for (l = al; l < INJ_RADIX_N; l++)
			t->lo[l].ge |= bit;
		for (l = 0; l <= bl; l++)
			t->lo[l].le |= bit;
	}
	if (!restr)
		return 0;
	all = in & ~restr;	/* the rules that do not restrict f: every value */
	for (h = 0; h < INJ_RADIX_N; h++)
		t->hi[h].f |= all;
	return 1;
}

/* rebuild hook / class / QPN masks from the rule table */
static int masks_sync(struct inj_ctx *c)
{
	struct inject_bpf *s = maps(c);
	uint64_t cls[INJ_CLS_MAX] = { 0 }, any = 0;
	struct { uint32_t key; uint64_t mask; } hooks[INJ_MAX_RULES], qpns[INJ_MAX_RULES];
	int nh = 0, nq = 0, k, hfd = bpf_map__fd(s->maps.inj_hooks);
	static struct inj_rule all[INJ_MAX_RULES];
	static struct inj_itab tab;
	static struct inj_rtab rtab;
	struct inj_rule r;
	struct inj_cfg cfg;
	struct inj_hook hv;
	uint32_t i, zero = 0, keys[INJ_MAX_HOOKS], track = 0, itab = 0;
	uint64_t in = 0, ce = 0, rel = 0;
	int nk, j, f, tfd = bpf_map__fd(s->maps.inj_itabs), rfd = bpf_map__fd(s->maps.inj_rtabs);

	memset(all, 0, sizeof(all));
	for (i = 0; i < INJ_MAX_RULES; i++) {
		uint64_t bit = 1ULL << i;
		uint32_t hk;

		if (rule_read(c, i, &r) || !r.id || r.disabled)
			continue;
		all[i] = r;
		in |= bit;
		if (r.ecn_ce)
			ce |= bit;
		if (r.rel)
			rel |= bit;
		hk = inj_hook_key(r.ifindex, r.dir);
		for (k = 0; k < nh && hooks[k].key != hk; k++)
			;
		if (k == nh) {
			hooks[nh].key = hk;
			hooks[nh++].mask = 0;
		}
		hooks[k].mask |= bit;
		if (r.rel)
			track |= INJ_TRACK_QP;
		if (r.rel & INJ_REL_TX)
			track |= INJ_TRACK_TX;
		if (r.action == INJ_ACT_CNP)
			track |= INJ_TRACK_PEER;
		for (k = 0; k < INJ_CLS_MAX; k++)
			if (!r.class_mask || (r.class_mask & (1u << k)))
				cls[k] |= bit;
		if (r.qpn_lo == r.qpn_hi) {
			for (k = 0; k < nq && qpns[k].key != r.qpn_lo; k++)
				;
			if (k == nq) {
				qpns[nq].key = r.qpn_lo;
				qpns[nq++].mask = 0;
			}
			qpns[k].mask |= bit;
		} else {
			any |= bit;
		}
	}
	/* every registered hook gets its mask (0 when its rules are gone) */
	nk = hook_keys(hfd, keys);
	for (j = 0; j < nk; j++) {
		if (bpf_map_lookup_elem(hfd, &keys[j], &hv))
			continue;
		hv.mask = 0;
		for (k = 0; k < nh; k++)
			if (hooks[k].key == keys[j])
				hv.mask = hooks[k].mask;
		if ((k = hook_put(c, keys[j], &hv, BPF_EXIST)))
			return k;
	}
	/* direct-mapped QPN buckets; a collision sends both QPNs' rules to "any" */
	{
		static struct inj_qpn_bucket b[INJ_QPN_BUCKETS];
		int qfd = bpf_map__fd(s->maps.inj_qpn_mask);

		memset(b, 0, sizeof(b));
		for (k = 0; k < nq; k++) {
			struct inj_qpn_bucket *e = &b[qpns[k].key & (INJ_QPN_BUCKETS - 1)];

			if (!e->used) {
				e->used = 1;
				e->qpn = qpns[k].key;
				e->mask = qpns[k].mask;
			} else {
				any |= qpns[k].mask;
			}
		}
		for (k = 0; k < nq; k++) {	/* a bucket that lost a collision goes too */
			struct inj_qpn_bucket *e = &b[qpns[k].key & (INJ_QPN_BUCKETS - 1)];

			if (e->used && e->qpn != qpns[k].key) {
				any |= e->mask;
				e->used = 2;	/* marked: cleared below */
			}
		}
		for (i = 0; i < INJ_QPN_BUCKETS; i++) {
			if (b[i].used == 2)
				memset(&b[i], 0, sizeof(b[i]));
			if (bpf_map_update_elem(qfd, &i, &b[i], BPF_ANY))
				return -errno;
		}
	}
	for (i = 0; i < INJ_CLS_MAX; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_class_mask), &i, &cls[i], BPF_ANY))
			return -errno;
	if (bpf_map_lookup_elem(bpf_map__fd(s->maps.inj_cfg), &zero, &cfg))
		memset(&cfg, 0, sizeof(cfg));
	/* the interval tables into the idle set; the switch below makes them live */
	itab = (cfg.itab & INJ_ITAB_HALF) ^ INJ_ITAB_HALF;
	for (f = 0; f < INJ_F_MAX; f++) {
		uint64_t rules = f == INJ_F_QPN ? any : in;
		uint32_t key;
		int fd;
		void *val;

		if (f < INJ_F_RADIX) {
			if (!rtab_build(&rtab, f, all, rules))
				continue;
			key = (itab & INJ_ITAB_HALF ? INJ_F_RADIX : 0) + (uint32_t)f;
			fd = rfd;
			val = &rtab;
		} else {
			if (!itab_build(&tab, f, all, rules))
				continue;
			key = (itab & INJ_ITAB_HALF ? INJ_F_MAX : 0) + (uint32_t)f;
			fd = tfd;
			val = &tab;
		}
		if (bpf_map_update_elem(fd, &key, val, BPF_ANY))
			return -errno;
		itab |= 1u << f;
	}
	cfg.itab = itab;
	cfg.ce_mask = ce;
	cfg.rel_mask = rel;
	cfg.qpn_any_mask = any;
	cfg.qpn_exact = nq > 0;
	cfg.track = track;
	cfg.generation++;
	return bpf_map_update_elem(bpf_map__fd(s->maps.inj_cfg), &zero, &cfg, BPF_ANY) ? -errno : 0;
}

/* the config entry read, changed by fn, written back */
static int cfg_update(struct inj_ctx *c, void (*fn)(struct inj_cfg *, const void *), const void *arg)
{
	int fd = bpf_map__fd(maps(c)->maps.inj_cfg);
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
	return cfg_update(c, set_seed, &seed);
}

static uint32_t owned_get(struct inj_ctx *c, uint32_t ifindex)
{
	uint32_t v = 0;

	bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_owned), &ifindex, &v);
	return v;
}

static int owned_set(struct inj_ctx *c, uint32_t ifindex, uint32_t v)
{
	int fd = bpf_map__fd(maps(c)->maps.inj_owned);

	return bpf_map_update_elem(fd, &ifindex, &v, BPF_ANY) ? -errno : 0;
}

static int owned_or(struct inj_ctx *c, uint32_t ifindex, uint32_t flag)
{
	return owned_set(c, ifindex, owned_get(c, ifindex) | flag);
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
static int hook_register(struct inj_ctx *c, uint32_t hk)
{
	struct inject_bpf *s = maps(c);
	int hfd = bpf_map__fd(s->maps.inj_hooks), r = 0, nk, j;
	uint8_t used[INJ_MAX_HOOKS] = { 0 };
	uint32_t keys[INJ_MAX_HOOKS], slot;
	struct inj_hook hv = { 0 };
	void *zero;

	if (!bpf_map_lookup_elem(hfd, &hk, &hv))
		return 0;
	nk = hook_keys(hfd, keys);
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
		r = hook_put(c, hk, &hv, BPF_NOEXIST);
	return r;
}

static int hook_attach(struct inj_ctx *c, uint32_t ifindex, int dir)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex,
		    .attach_point = dir == INJ_DIR_EGRESS ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);
	LIBBPF_OPTS(bpf_tc_opts, a, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);
	int r, fd;

	r = hook_register(c, inj_hook_key(ifindex, (uint32_t)dir));
	if (r)
		return r;
	/*
	 * We make the clsact, so flush removes it: recorded before it is made
	 * (a kill between the two would leave one that flush cannot know for
	 * ours; flush's destroy of one never made is harmless), and taken
	 * back if the device had one after all or the create fails.
	 */
	{
		struct clsact_find cf = { ifindex, 0 };
		uint32_t was = owned_get(c, ifindex);
		int ahead = !(was & INJ_OWN_CLSACT) && !qdisc_scan(clsact_seen, &cf) && !cf.found;

		if (ahead)
			owned_set(c, ifindex, was | INJ_OWN_CLSACT);
		r = bpf_tc_hook_create(&hook);
		crash_point("clsact-made");
		if (!r && !ahead)	/* made where the scan could not look first */
			owned_or(c, ifindex, INJ_OWN_CLSACT);
		else if (r && ahead)
			owned_set(c, ifindex, was);
		if (r && r != -EEXIST)
			return r;
	}
	if (!bpf_tc_query(&hook, &q))
		return 0;	/* already attached (by us, earlier) */
	fd = inj_prog_fd(c, dir);
	if (fd < 0)
		return fd;
	a.prog_fd = fd;
	return bpf_tc_attach(&hook, &a);
}

static void hook_gc(struct inj_ctx *c, uint32_t ifindex, int dir);

static int hook_detach(uint32_t ifindex, int dir)
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
	struct inject_bpf *s = maps(c);
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

/* the other end of a veth, 0 if ifindex is not one end of a pair */
static uint32_t veth_peer(uint32_t ifindex)
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
static int place_on_egress(struct inj_rule *r, char *err, size_t errlen)
{
	char name[IF_NAMESIZE] = "?", peer_name[IF_NAMESIZE] = "?";
	uint32_t peer;

	if ((r->action != INJ_ACT_DELAY && r->action != INJ_ACT_REORDER) ||
	    r->dir == INJ_DIR_EGRESS)
		return 0;
	if_indextoname(r->ifindex, name);
	peer = veth_peer(r->ifindex);
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

int inj_rule_add(struct inj_ctx *c, struct inj_rule *r, char *err, size_t errlen)
{
	struct inj_rule cur;
	uint32_t i, free_slot = INJ_MAX_RULES, max_id = 0;
	int ret;

	ret = validate(r, err, errlen);
	if (!ret)
		ret = place_on_egress(r, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (rule_read(c, i, &cur))
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
	if (r->action == INJ_ACT_DELAY || r->action == INJ_ACT_REORDER) {
		/* recorded as ours before it is made, as the clsact (hook_attach) */
		uint32_t was = owned_get(c, r->ifindex);

		if (!(was & INJ_OWN_PRIO))
			owned_set(c, r->ifindex, was | INJ_OWN_PRIO);
		ret = qdisc_prio_ensure(r->ifindex, r->hold_ns, err, errlen);
		if (ret < 0 && !(was & INJ_OWN_PRIO))
			owned_set(c, r->ifindex, was);
		if (ret < 0)
			return ret;
	}
	ret = hook_attach(c, r->ifindex, r->dir);
	/* a cnp rule's CNP is made on the device's other direction (inject_abi.h) */
	if (!ret && r->action == INJ_ACT_CNP)
		ret = hook_attach(c, r->ifindex, !r->dir);
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

		if (bpf_map_update_elem(bpf_map__fd(maps(c)->maps.inj_leases), &r->id, &dl, BPF_ANY))
			ret = -errno;
	}
	if (!ret)	/* the window starts now, with the program attached */
		inj_rule_window_start(r);
	if (!ret && bpf_map_update_elem(bpf_map__fd(maps(c)->maps.inj_rules), &free_slot, r,
					BPF_ANY))
		ret = -errno;
	if (!ret)
		ret = masks_sync(c);
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
		ret = hook_attach(c, r->ifindex, !r->dir);
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
	if (bpf_map_update_elem(bpf_map__fd(maps(c)->maps.inj_rules), &slot, &cur, BPF_ANY))
		return -errno;
	ret = masks_sync(c);
	if (s)	/* no longer a cnp rule: its other direction may go */
		hook_gc(c, r->ifindex, !r->dir);
	return ret;
}

/* a hook no rule uses any more is detached (a cnp rule uses both directions) */
static void hook_gc(struct inj_ctx *c, uint32_t ifindex, int dir)
{
	struct inj_rule r;
	struct inj_hook hv;
	uint32_t i;

	for (i = 0; i < INJ_MAX_RULES; i++)
		if (!rule_read(c, i, &r) && r.id && r.ifindex == ifindex &&
		    (r.dir == dir || r.action == INJ_ACT_CNP))
			return;
	i = inj_hook_key(ifindex, (uint32_t)dir);
	if (!bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_hooks), &i, &hv) &&
	    (hv.flags & INJ_HOOK_TRACE))
		return;	/* a trace still reads it */
	hook_detach(ifindex, dir);
	hook_drop(c, i);
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
	if (bpf_map_update_elem(bpf_map__fd(maps(c)->maps.inj_rules), &slot, &empty, BPF_ANY))
		return -errno;
	bpf_map_delete_elem(bpf_map__fd(maps(c)->maps.inj_leases), &id);	/* none: fine */
	r = masks_sync(c);
	hook_gc(c, cur.ifindex, cur.dir);
	if (cur.action == INJ_ACT_CNP)
		hook_gc(c, cur.ifindex, !cur.dir);
	return r;
}

int inj_rule_list(struct inj_ctx *c, struct inj_rule *out, int max)
{
	struct inj_rule r;
	uint32_t i;
	int n = 0;

	for (i = 0; i < INJ_MAX_RULES && n < max; i++)
		if (!rule_read(c, i, &r) && r.id)
			out[n++] = r;
	return n;
}

/* a per-CPU value made of u64 counters, summed over the CPUs */
static int percpu_sum(struct inj_ctx *c, int fd, uint32_t key, void *out, size_t size)
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
	return percpu_sum(c, bpf_map__fd(maps(c)->maps.inj_rule_ctrs), (uint32_t)s, sum,
			  sizeof(*sum));
}

int inj_hook_counters(struct inj_ctx *c, uint32_t ifindex, int dir, struct inj_hook_ctr *sum)
{
	uint32_t hk = inj_hook_key(ifindex, (uint32_t)dir);
	struct inj_hook hv;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_hooks), &hk, &hv))
		return -ENOENT;
	return percpu_sum(c, bpf_map__fd(maps(c)->maps.inj_hook_ctrs), hv.slot, sum, sizeof(*sum));
}

int inj_hook_list(struct inj_ctx *c, uint32_t *ifindex, int *dir, int max)
{
	struct if_nameindex *all = if_nameindex(), *p;
	int n = 0, d;

	(void)c;
	if (!all)
		return -errno;
	for (p = all; p->if_index && n < max; p++) {
		for (d = 0; d < 2 && n < max; d++) {
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)p->if_index,
				    .attach_point = d ? BPF_TC_EGRESS : BPF_TC_INGRESS);
			LIBBPF_OPTS(bpf_tc_opts, q, .handle = INJ_TC_HANDLE, .priority = INJ_TC_PRIO);

			if (bpf_tc_query(&hook, &q))
				continue;
			ifindex[n] = p->if_index;
			dir[n++] = d;
		}
	}
	if_freenameindex(all);
	return n;
}

/* flush under the state lock */
static int flush_locked(const char *root)
{
	uint32_t ifx[512], key, next;
	int dirs[512], n, i, fd, first = 1, r = 0;
	char path[512];
	struct inj_ctx tmp = { .lock = -1 };

	/* the qdiscs we made are recorded in inj_owned: found before the
	 * filters go (without pins it is found through their program) */
	fd = owned_map_fd(root);
	/* every filter of ours, on every device, whatever the maps say */
	n = inj_hook_list(&tmp, ifx, dirs, 512);
	for (i = 0; i < n; i++) {
		int e = hook_detach(ifx[i], dirs[i]);

		if (e && !r)
			r = e;
	}
	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		uint32_t own = 0;

		first = 0;
		key = next;
		bpf_map_lookup_elem(fd, &key, &own);
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
	if (!is_bpffs(root))
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
	if (w.fd < 0 && (id = our_prog_id()))
		for_prog_maps(id, dup_if_named, &w);
	return w.fd;
}

/* a trace that reads the ring (its rdma-inject alive): its pid, else 0 */
static uint32_t trace_owner(const char *root)
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
	return any || trace_owner(root);	/* a trace's hooks are in use too */
}

int inj_flush_if(const char *pin_root, int only_if_empty)
{
	const char *root = pin_root ? pin_root : INJ_PIN_DIR;
	int lock = state_lock(), r = 0;

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

/* --- tracing (inject_abi.h): hooks flagged INJ_HOOK_TRACE, one reader --- */

static int hook_flags_set(struct inj_ctx *c, uint32_t hk, uint32_t set, uint32_t clear)
{
	int hfd = bpf_map__fd(maps(c)->maps.inj_hooks);
	struct inj_hook hv;

	if (bpf_map_lookup_elem(hfd, &hk, &hv))
		return -ENOENT;
	hv.flags = (hv.flags & ~clear) | set;
	return hook_put(c, hk, &hv, BPF_EXIST);
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

	return cfg_update(c, set_trace, v);
}

/* every hook's trace flag off, and the hooks no rule uses detached */
static void trace_clear_all(struct inj_ctx *c)
{
	uint32_t keys[INJ_MAX_HOOKS];
	int j, nk = hook_keys(bpf_map__fd(maps(c)->maps.inj_hooks), keys);

	for (j = 0; j < nk; j++)
		if (!hook_flags_set(c, keys[j], 0, INJ_HOOK_TRACE))
			hook_gc(c, keys[j] >> 1, (int)(keys[j] & 1));
	cfg_trace(c, 0, 0);
}

int inj_trace_begin(struct inj_ctx *c, const uint32_t *ifindex, const int *dir, int n,
		    uint32_t snaplen, char *err, size_t errlen)
{
	uint32_t owner = trace_owner(c->pin_root);
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
		r = hook_attach(c, ifindex[i], dir[i]);
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
	int j, nk = hook_keys(bpf_map__fd(maps(c)->maps.inj_hooks), keys);

	for (j = 0; j < nk; j++)
		hook_flags_set(c, keys[j], 0, INJ_HOOK_TRACE);
}

void inj_trace_end(struct inj_ctx *c)
{
	trace_clear_all(c);
}

int inj_trace_ring_fd(struct inj_ctx *c)
{
	return bpf_map__fd(maps(c)->maps.inj_trace);
}

/* tracking (inject_abi.h): switched on by hand, the QPs seen, a new count */
int inj_track_set(struct inj_ctx *c, uint32_t on)
{
	uint32_t zero = 0, v = on ? INJ_TRACK_QP : 0;

	return bpf_map_update_elem(bpf_map__fd(maps(c)->maps.inj_track), &zero, &v, BPF_ANY) ?
		       -errno : 0;
}

int inj_track_get(struct inj_ctx *c, uint32_t *by_hand, uint32_t *by_rules)
{
	int fd = bpf_map__fd(maps(c)->maps.inj_cfg);
	struct inj_cfg cfg;
	uint32_t zero = 0;

	*by_hand = *by_rules = 0;
	if (!bpf_map_lookup_elem(fd, &zero, &cfg))
		*by_rules = cfg.track;
	bpf_map_lookup_elem(bpf_map__fd(maps(c)->maps.inj_track), &zero, by_hand);
	return 0;
}

int inj_qp_list(struct inj_ctx *c, struct inj_qp_key *keys, struct inj_qp *qps, int max)
{
	int fd = bpf_map__fd(maps(c)->maps.inj_qps), n = 0;
	struct inj_qp_key k, nk;

	while (n < max && !bpf_map_get_next_key(fd, n ? &k : NULL, &nk)) {
		k = nk;
		if (bpf_map_lookup_elem(fd, &k, &qps[n]))
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
	struct inject_bpf *s = maps(c);
	uint64_t zero64 = 0;
	uint32_t i;

	hash_clear(bpf_map__fd(s->maps.inj_qps), sizeof(struct inj_qp_key));
	hash_clear(bpf_map__fd(s->maps.inj_tx), sizeof(struct inj_tx_key));
	for (i = 0; i < INJ_MAX_HOOKS; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_qp_next), &i, &zero64, BPF_ANY))
			return -errno;
	return 0;
}
