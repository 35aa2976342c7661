// SPDX-License-Identifier: MIT
/*
 * rdma-inject trace: every RoCEv2 packet the named hooks see, as pcapng.
 *
 *   rdma-inject trace [snaplen N] [count N] [for T] [to FILE|-] dev DEV [ingress|egress|both]...
 *
 * One interface per hook (if_name DEV, if_description "DEV ingress"),
 * nanosecond timestamps (CLOCK_REALTIME, converted from the program's
 * CLOCK_MONOTONIC with one offset taken at the start, so intervals are the
 * kernel's own), epb_flags inbound/outbound, and the injector's verdict in
 * the packet's comment when it did something ("verdict=dropped rule=3";
 * "verdict=delayed rule=2 delay_ns=1000000"), or when a rule only matched
 * ("verdict=passed rule=4"). At the end, an interface statistics block per
 * hook: isb_ifrecv the packets the hook saw while tracing, isb_ifdrop the
 * records the ring had no room for (also said on stderr; exit 1 if any),
 * and in its comment the packets the hook itself counted resent
 * ("injector resent=N": tracking is on while tracing).
 * FILE is written as FILE.part and renamed when complete; "-" is stdout.
 * Ends at SIGINT, SIGTERM or SIGHUP, after count packets or after T.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <jansson.h>
#include "inj.h"
#include "../lib/clock.h"
#include "../lib/log.h"
#include "../lib/num.h"
#include "../lib/pcapng.h"

#define MAX_TRACE_HOOKS 32

static volatile sig_atomic_t trace_stop;

static void on_stop(int sig)
{
	(void)sig;
	trace_stop = 1;
}

struct thook {
	uint32_t ifindex;
	int dir;
	char dev[IF_NAMESIZE];
	uint64_t records, traced0, lost0, traced1, lost1, resent0, resent1;
};

struct tstate {
	FILE *out;
	int nh, werr;
	struct thook h[MAX_TRACE_HOOKS];
	uint64_t off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t count, records, foreign;
	uint64_t limit;
};

#define VERDICT_NAME(e, name) name,
static const char *const verdict_names[] = { INJ_VERDICTS(VERDICT_NAME) };
#undef VERDICT_NAME

const char *inj_verdict_name(int v)
{
	return v >= 0 && v < INJ_VERDICT_MAX ? verdict_names[v] : "unknown";
}

static int on_rec(void *ctx, void *data, size_t size)
{
	struct tstate *t = ctx;
	const struct inj_trace_hdr *h = data;
	char comment[128] = "";
	int i;

	if (size < sizeof(*h) || sizeof(*h) + h->cap_len > size)
		return 0;
	for (i = 0; i < t->nh; i++)
		if (inj_hook_key(t->h[i].ifindex, (uint32_t)t->h[i].dir) == h->hook)
			break;
	if (i == t->nh) {	/* a hook another trace flagged and that we did not ask for */
		t->foreign++;
		return 0;
	}
	if (h->verdict == INJ_VERDICT_DELAY)
		snprintf(comment, sizeof(comment), "verdict=%s rule=%u delay_ns=%llu",
			 inj_verdict_name(h->verdict), h->rule_id, (unsigned long long)h->delay_ns);
	else if (h->verdict != INJ_VERDICT_PASS || h->rule_id)
		snprintf(comment, sizeof(comment), h->rule_id ? "verdict=%s rule=%u" : "verdict=%s",
			 inj_verdict_name(h->verdict), h->rule_id);
	if (h->flags & INJ_TREC_RESENT)	/* the hook counted it: rdmactl analyze checks */
		snprintf(comment + strlen(comment), sizeof(comment) - strlen(comment), "%sresent",
			 comment[0] ? " " : "");
	if (!t->werr && pcapng_put_epb(t->out, (uint32_t)i, h->ts_ns + t->off_ns,
				       (const uint8_t *)data + sizeof(*h), h->cap_len, h->wire_len,
				       t->h[i].dir ? PCAPNG_OUTBOUND : PCAPNG_INBOUND, comment))
		t->werr = errno ? errno : EIO;
	t->h[i].records++;
	t->records++;
	if (t->limit && t->records >= t->limit)
		trace_stop = 1;
	return 0;
}

/* the smallest of a few REALTIME - MONOTONIC readings */
static uint64_t clock_offset(void)
{
	uint64_t best = 0;
	int k;

	for (k = 0; k < 5; k++) {
		struct timespec m0, r, m1;
		uint64_t mono, real;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		mono = ((uint64_t)m0.tv_sec * 1000000000ull + (uint64_t)m0.tv_nsec +
			(uint64_t)m1.tv_sec * 1000000000ull + (uint64_t)m1.tv_nsec) / 2;
		real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
		if (!k || real - mono < best)
			best = real - mono;
	}
	return best;
}

static int add_hook(struct tstate *t, const char *dev, int dir)
{
	struct thook *h;
	int i;

	for (i = 0; i < t->nh; i++)
		if (!strcmp(t->h[i].dev, dev) && t->h[i].dir == dir)
			return 0;
	if (t->nh == MAX_TRACE_HOOKS) {
		log_err("trace: at most %d hooks", MAX_TRACE_HOOKS);
		return -1;
	}
	h = &t->h[t->nh];
	memset(h, 0, sizeof(*h));
	h->ifindex = if_nametoindex(dev);
	if (!h->ifindex) {
		log_err("trace: dev %s: no such device", dev);
		return -1;
	}
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	h->dir = dir;
	t->nh++;
	return 0;
}

static int parse_args(int argc, char **argv, struct tstate *t, uint32_t *snaplen,
		      double *for_s, const char **to)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (!strcmp(w, "dev")) {
			const char *d = v;
			int both = 1, dir = 0;

			if (!d) {
				log_err("trace: dev needs a device name");
				return -1;
			}
			i++;
			if (i + 1 < argc && (!strcmp(argv[i + 1], "ingress") ||
					     !strcmp(argv[i + 1], "egress") ||
					     !strcmp(argv[i + 1], "both"))) {
				both = !strcmp(argv[i + 1], "both");
				dir = !strcmp(argv[i + 1], "egress");
				i++;
			}
			if (add_hook(t, d, both ? INJ_DIR_INGRESS : dir) ||
			    (both && add_hook(t, d, INJ_DIR_EGRESS)))
				return -1;
			continue;
		}
		if (!v) {
			log_err("trace: '%s' needs a value (expected snaplen N, count N, for T, "
				"to FILE, dev DEV [ingress|egress|both])", w);
			return -1;
		}
		if (!strcmp(w, "snaplen") || !strcmp(w, "count")) {
			const char *why;

			if (num_parse(v, NUM_PLAIN, !strcmp(w, "snaplen") ? 1 : 0,
				      !strcmp(w, "snaplen") ? INJ_TRACE_SNAP_MAX : UINT64_MAX, &n,
				      &why)) {
				log_err("trace: %s '%s': expected %s", w, v,
					!strcmp(w, "snaplen") ? "1 to 512 (bytes)" : "a count");
				return -1;
			}
			if (!strcmp(w, "snaplen"))
				*snaplen = (uint32_t)n;
			else
				t->limit = n;
		} else if (!strcmp(w, "for")) {
			uint64_t ns;
			const char *why;

			if (num_parse(v, NUM_TIME, 1, UINT64_MAX, &ns, &why)) {
				log_err("trace: for '%s': expected a duration (10s, 500ms)", v);
				return -1;
			}
			*for_s = (double)ns / 1e9;
		} else if (!strcmp(w, "to")) {
			*to = v;
		} else {
			log_err("trace: unknown word '%s' (expected snaplen N, count N, for T, to FILE, "
				"dev DEV [ingress|egress|both])", w);
			return -1;
		}
		i++;
	}
	if (!t->nh) {
		log_err("trace: which hooks? dev DEV [ingress|egress|both] (both if left out)");
		return -1;
	}
	return 0;
}

static void read_ctrs(struct inj_ctx *c, struct tstate *t, int end)
{
	int i;

	for (i = 0; i < t->nh; i++) {
		struct inj_hook_ctr k;

		if (inj_hook_counters(c, t->h[i].ifindex, t->h[i].dir, &k))
			memset(&k, 0, sizeof(k));
		if (end) {
			t->h[i].traced1 = k.traced;
			t->h[i].lost1 = k.trace_lost;
			t->h[i].resent1 = k.resent;
		} else {
			t->h[i].traced0 = k.traced;
			t->h[i].lost0 = k.trace_lost;
			t->h[i].resent0 = k.resent;
		}
	}
}

/* where the pcapng goes: FILE (written as FILE.part, renamed when whole)
 * or stdout (not a terminal): 0, or the exit code */
static int open_out(struct tstate *t, const char *to, char *part, size_t len)
{
	int fd;

	if (!to && isatty(STDOUT_FILENO)) {
		log_err("trace: stdout is a terminal: say where the pcapng goes (to FILE, or to - "
			"for a pipe: rdma-inject trace dev X | tshark -r -)");
		return 2;
	}
	if (!to || !strcmp(to, "-")) {
		t->out = stdout;
		return 0;
	}
	snprintf(part, len, "%s.part", to);
	fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(t->out = fdopen(fd, "w"))) {
		log_err("trace: %s: %s", part, strerror(errno));
		if (fd >= 0)
			close(fd);
		part[0] = 0;
		return 1;
	}
	return 0;
}

/* the section header and one interface per hook */
static void put_headers(struct tstate *t, uint32_t snaplen)
{
	int i;

	if (pcapng_put_shb(t->out, "rdma-inject trace"))
		t->werr = errno;
	for (i = 0; i < t->nh && !t->werr; i++) {
		char desc[64];

		snprintf(desc, sizeof(desc), "%s %s", t->h[i].dev, t->h[i].dir ? "egress" : "ingress");
		if (pcapng_put_idb(t->out, t->h[i].dev, desc, snaplen))
			t->werr = errno;
	}
	fflush(t->out);
}

/* the ring read into the capture until stopped, for_s passed (0: no
 * limit) or a write failed */
static void capture(struct tstate *t, struct inj_ring *rb, double for_s)
{
	double t0 = rtb_now_s();
	int r;

	while (!trace_stop && !t->werr) {
		/* woken only when the ring fills (inject.bpf.c): drain it anyway */
		r = inj_ring_poll(rb, INJ_TRACE_DRAIN_MS);
		if (r < 0 && r != -EINTR) {
			log_err("trace: reading the ring: %s", strerror(-r));
			break;
		}
		if (for_s > 0 && rtb_now_s() - t0 >= for_s)
			break;
	}
}

/* each interface's statistics: the records it got and the ones lost
 * (what a hook put in the ring and we did not get is lost too), and the
 * hook's own count of resent packets over the same window (the trace
 * turned tracking on): rdmactl analyze checks the trace against it.
 * Returns the records lost */
static uint64_t put_stats(struct tstate *t, uint64_t start_ns, uint64_t end_ns)
{
	uint64_t lost = 0;
	int i;

	for (i = 0; i < t->nh && !t->werr; i++) {
		struct thook *h = &t->h[i];
		uint64_t hl = h->lost1 - h->lost0, ht = h->traced1 - h->traced0;
		char note[64];

		if (ht > h->records)
			hl += ht - h->records;
		lost += hl;
		snprintf(note, sizeof(note), "injector resent=%llu marked",
			 (unsigned long long)(h->resent1 - h->resent0));
		if (pcapng_put_isb(t->out, (uint32_t)i, end_ns, start_ns, end_ns, h->records + hl, hl,
				   note))
			t->werr = errno;
		h->lost1 = hl;	/* kept for the summary */
	}
	return lost;
}

/* what was traced: on stderr, and as JSON on stdout (-j, to a file) */
static void say_traced(const struct tstate *t, const char *to, uint32_t snaplen, uint64_t lost,
		       int json_out)
{
	int i;

	if (json_out && to && strcmp(to, "-")) {
		json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:[]}", "file", to, "snaplen",
				      (json_int_t)snaplen, "packets", (json_int_t)t->records, "lost",
				      (json_int_t)lost, "hooks");

		for (i = 0; i < t->nh; i++)
			json_array_append_new(json_object_get(o, "hooks"),
					      json_pack("{s:s,s:s,s:I,s:I}", "dev", t->h[i].dev, "dir",
							t->h[i].dir ? "egress" : "ingress", "packets",
							(json_int_t)t->h[i].records, "lost",
							(json_int_t)t->h[i].lost1));
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	}
	fprintf(stderr, "rdma-inject: traced %llu packets", (unsigned long long)t->records);
	for (i = 0; i < t->nh; i++)
		fprintf(stderr, "%s %s %s %llu", i ? "," : ":", t->h[i].dev,
			t->h[i].dir ? "egress" : "ingress", (unsigned long long)t->h[i].records);
	fprintf(stderr, lost ? "; %llu lost (the ring was full)\n" : "; %llu lost\n",
		(unsigned long long)lost);
	if (lost)
		log_err("trace: %llu records lost: the capture is incomplete (isb_ifdrop says where); "
			"a smaller snaplen or fewer hooks cost less", (unsigned long long)lost);
}

/* the tracing flags set on the hooks, the counters read: the injector's
 * state, unlocked (NULL when it failed, said) */
static struct inj_ctx *begin(struct tstate *t, const char *pin_root, uint32_t snaplen)
{
	uint32_t ifx[MAX_TRACE_HOOKS];
	int dirs[MAX_TRACE_HOOKS], i;
	char err[512] = "";
	struct inj_ctx *c = inj_open(pin_root);

	if (!c) {
		log_err("trace: cannot load the injector: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < t->nh; i++) {
		ifx[i] = t->h[i].ifindex;
		dirs[i] = t->h[i].dir;
	}
	if (inj_trace_begin(c, ifx, dirs, t->nh, snaplen, err, sizeof(err))) {
		log_err("trace: %s", err);
		inj_close(c);
		return NULL;
	}
	read_ctrs(c, t, 0);
	inj_unlock(c);
	return c;
}

/* flags off first (the hooks stay), then what is left in the ring, then
 * the counters, which no longer move, then the hooks go; the qdiscs a
 * trace made go with it when no rule is left either */
static void end(struct inj_ctx *c, struct tstate *t, struct inj_ring *rb, const char *pin_root)
{
	inj_close(c);
	c = inj_open(pin_root);
	if (c)
		inj_trace_stop(c);
	if (rb) {
		inj_ring_consume(rb);
		inj_ring_free(rb);
	}
	if (c) {
		read_ctrs(c, t, 1);
		inj_trace_end(c);
		inj_close(c);
		inj_flush_if(pin_root, 1);
	}
}

int cmd_trace(int argc, char **argv, int json_out, const char *pin_root)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct tstate *t = calloc(1, sizeof(*t));
	struct inj_ring *rb;
	struct inj_ctx *c;
	uint32_t snaplen = INJ_TRACE_SNAP_DEFAULT;
	int rc = 1;
	const char *to = NULL;
	char part[4096] = "";
	double for_s = 0;
	uint64_t lost, start_ns;

	if (!t)
		return 1;
	if (parse_args(argc, argv, t, &snaplen, &for_s, &to)) {
		free(t);
		return 2;
	}
	if ((rc = open_out(t, to, part, sizeof(part)))) {
		free(t);
		return rc;
	}
	rc = 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!(c = begin(t, pin_root, snaplen)))
		goto out;
	t->off_ns = clock_offset();
	start_ns = rtb_now_ns() + t->off_ns;
	put_headers(t, snaplen);
	rb = inj_ring_new(inj_trace_ring_fd(c), on_rec, t);
	if (!rb) {
		log_err("trace: cannot read the trace ring: %s", strerror(errno));
	} else {
		fprintf(stderr, "rdma-inject: tracing %d hook%s, snaplen %u%s\n", t->nh,
			t->nh == 1 ? "" : "s", snaplen, to && strcmp(to, "-") ? "" : " (pcapng on stdout)");
		fflush(stderr);
		capture(t, rb, for_s);
	}
	end(c, t, rb, pin_root);
	lost = put_stats(t, start_ns, rtb_now_ns() + t->off_ns);
	if (!t->werr && fflush(t->out))
		t->werr = errno;
	if (t->werr) {
		log_err("trace: writing the capture: %s", strerror(t->werr));
		goto out;
	}
	if (part[0]) {
		FILE *f = t->out;

		t->out = NULL;
		if (fclose(f)) {
			log_err("trace: %s: %s", part, strerror(errno));
			goto out;
		}
		if (rename(part, to)) {
			log_err("trace: %s: %s", to, strerror(errno));
			goto out;
		}
		part[0] = 0;
	}
	say_traced(t, to, snaplen, lost, json_out);
	rc = lost ? 1 : 0;
out:
	if (t->out && t->out != stdout)
		fclose(t->out);
	if (part[0])
		unlink(part);
	free(t);
	return rc;
}
