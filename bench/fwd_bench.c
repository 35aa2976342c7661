// SPDX-License-Identifier: MIT
/*
 * How fast rdma-inject forward forwards, against the limit and against the
 * bridge, on one core of this host (issue 38 item 4). Three paths of veth
 * pairs, each from a sender's namespace A through a forwarding namespace F
 * to a sink's namespace B:
 *   plain    XDP forwarding and nothing else (fwd_bench.bpf.c plain_fwd)
 *   forward  rdma-inject forward, with 0, 1 or 64 rules on its ingress port
 *   bridge   a Linux bridge, with no tc program, or the tc injector with 1 or
 *            64 rules on its ingress port
 * The rule sets are inject_cost's: 1 matching rule; 63 rules whose QPN
 * ranges take the packet and whose PSN ranges do not, then the matching one
 * (the index's worst case).
 *
 * Packets per second: the kernel makes the frames (BPF_PROG_TEST_RUN with
 * live frames, in batches of 64) at F's ingress port, and the sink's XDP
 * program at B counts and drops what arrives; the rate is what arrived over
 * the time from the first frame to the last one counted. All on one CPU.
 * The sets take turns, PASSES passes, the median kept.
 *
 * Latency: one datagram at a time from A's socket, stamped at A's tc egress
 * and read at B's sink (one clock, the kernel's): the one-way time through
 * each path, pooled over the passes, p50 and p99.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "../injector/inj.h"
#include "inj_bench.h"
#include "../lib/proc.h"
#include "../tests/bpf/frames.h"
#include "fwd_bench.skel.h"

#define FRAMES 400000	/* a measurement of the rate */
#define PASSES 5
#define LAT_N 3000	/* one-way times a path and pass */
#define PAYLOAD 1024
#define NVAR 10

enum path { P_PLAIN, P_FWD, P_BRIDGE };

/* rules: how many; spread: inject_cost's worst case for the index (63
 * candidates that fail on PSN), else its best (63 rules for other QPNs) */
static const struct variant {
	const char *name;
	enum path path;
	int rules, spread, traced;
} vars[NVAR] = {
	{ "plain XDP forwarding", P_PLAIN, 0, 0, 0 },
	{ "forward, 0 rules", P_FWD, 0, 0, 0 },
	{ "forward, 1 rule", P_FWD, 1, 0, 0 },
	{ "forward, 1 rule, traced", P_FWD, 1, 0, 1 },
	{ "forward, 64 rules (other QPNs)", P_FWD, 64, 0 },
	{ "forward, 64 rules (spread)", P_FWD, 64, 1 },
	{ "bridge", P_BRIDGE, 0, 0 },
	{ "bridge + tc injector, 1 rule", P_BRIDGE, 1, 0 },
	{ "bridge + tc, 64 (other QPNs)", P_BRIDGE, 64, 0 },
	{ "bridge + tc, 64 (spread)", P_BRIDGE, 64, 1 },
};
#define V_FWD1 2
#define V_FWD1T 3
#define V_FWD64 4
#define V_FWD64S 5
#define V_BR64 8
#define V_BR64S 9

static char ns[3][32], pin[96];
static struct fwd_bench_bpf *sk;
static struct inj_ctx *ictx;
static int nsfd[3];
/* per path: F's ingress port, the program the frames run through there */
static uint32_t in_ifx[3];
static int gen_fd[3];

static int cmd(int must, const char *fmt, ...);

static void teardown(void)
{
	if (ictx)
		inj_close(ictx);
	ictx = NULL;
	if (pin[0])
		inj_flush(pin);
	for (int i = 0; i < 3; i++)
		if (ns[i][0])
			cmd(0, "ip netns del %s", ns[i]);	/* gone already: fine */
	if (pin[0])
		rmdir(pin);
}

static void on_signal(int s)
{
	(void)s;
	exit(1);	/* atexit's teardown */
}

static void die(const char *what, int err)
{
	fprintf(stderr, "fwd_bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void enter(int which)
{
	if (setns(nsfd[which], CLONE_NEWNET))
		die("setns", errno);
}

/* a command with no shell: the text split at its spaces, run as argv; 0 or
 * the failure (must: said, and the bench ends) */
static int cmd(int must, const char *fmt, ...)
{
	char buf[512], *argv[32], *save;
	va_list ap;
	int n = 0, r;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *t = strtok_r(buf, " ", &save); t && n < 31; t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	r = proc_run(argv, NULL, 0);
	if (r && must) {
		fprintf(stderr, "fwd_bench: failed (%d): %s\n", r, argv[0]);
		exit(1);
	}
	return r;
}

/* the namespaces and the three paths: A's pa0, xa0, ba0 to B's pb0, xb0,
 * bb0, through F's pa1/pb1 (plain), xa1/xb1 (forward), ba1/bb1 (bridge) */
static void make_paths(void)
{
	static const char *const p = "pxb";

	for (int i = 0; i < 3; i++) {
		char path[64];

		snprintf(ns[i], sizeof(ns[i]), "rfb%c%d", "AFB"[i], (int)getpid());
		cmd(1, "ip netns add %s", ns[i]);
		snprintf(path, sizeof(path), "/run/netns/%s", ns[i]);
		nsfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd[i] < 0)
			die(path, errno);
	}
	for (int i = 0; i < 3; i++) {
		cmd(1, "ip -n %s link add %ca0 address 02:00:00:00:1%d:01 type veth peer name %ca1 netns %s",
		   ns[0], p[i], i, p[i], ns[1]);
		cmd(1, "ip -n %s link add %cb0 address 02:00:00:00:1%d:02 type veth peer name %cb1 netns %s",
		   ns[2], p[i], i, p[i], ns[1]);
		cmd(1, "ip -n %s addr add 198.18.1%d.1/24 dev %ca0", ns[0], i, p[i]);
		cmd(1, "ip -n %s link set %ca0 up", ns[0], p[i]);
		cmd(1, "ip -n %s neigh add 198.18.1%d.2 lladdr 02:00:00:00:1%d:02 dev %ca0", ns[0], i, i,
		   p[i]);
		cmd(1, "ip -n %s addr add 198.18.1%d.2/24 dev %cb0", ns[2], i, p[i]);
		cmd(1, "ip -n %s link set %cb0 up", ns[2], p[i]);
		cmd(1, "ip -n %s link set %ca1 up", ns[1], p[i]);
		cmd(1, "ip -n %s link set %cb1 up", ns[1], p[i]);
	}
	cmd(1, "ip -n %s link add br0 type bridge", ns[1]);
	cmd(1, "ip -n %s link set ba1 master br0", ns[1]);
	cmd(1, "ip -n %s link set bb1 master br0", ns[1]);
	cmd(1, "ip -n %s link set br0 up", ns[1]);
	cmd(1, "bridge -n %s fdb add 02:00:00:00:12:02 dev bb1 master static", ns[1]);
}

static void xdp_on(const char *dev, int fd)
{
	int r = bpf_xdp_attach((int)if_nametoindex(dev), fd, XDP_FLAGS_DRV_MODE, NULL);

	if (r)
		die(dev, r);
}

static void tc_stamp_on(const char *dev)
{
	LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = (int)if_nametoindex(dev), .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = bpf_program__fd(sk->progs.stamp));
	int r = bpf_tc_hook_create(&h);

	if (r && r != -EEXIST)
		die(dev, r);
	r = bpf_tc_attach(&h, &o);
	if (r)
		die(dev, r);
}

/* the programs on the paths: sinks at B, stamps at A, the forwarders at F */
static void make_programs(void)
{
	char *fwd_argv[] = { "xa1", "xb1" };
	uint32_t zero = 0, out;

	enter(2);
	xdp_on("pb0", bpf_program__fd(sk->progs.sink));
	xdp_on("xb0", bpf_program__fd(sk->progs.sink));
	xdp_on("bb0", bpf_program__fd(sk->progs.sink));
	enter(0);
	tc_stamp_on("pa0");
	tc_stamp_on("xa0");
	tc_stamp_on("ba0");
	enter(1);
	out = if_nametoindex("pb1");
	if (bpf_map_update_elem(bpf_map__fd(sk->maps.plain_ports), &zero, &out, BPF_ANY))
		die("plain_ports", errno);
	xdp_on("pa1", bpf_program__fd(sk->progs.plain_fwd));
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/rdma-inject-fwdbench-%d", (int)getpid());
	if (cmd_forward(2, fwd_argv, 0, pin))
		exit(1);
	ictx = inj_open(pin);
	if (!ictx)
		die("inj_open", errno);
	in_ifx[P_PLAIN] = if_nametoindex("pa1");
	in_ifx[P_FWD] = if_nametoindex("xa1");
	in_ifx[P_BRIDGE] = if_nametoindex("ba1");
	gen_fd[P_PLAIN] = bpf_program__fd(sk->progs.plain_fwd);
	gen_fd[P_BRIDGE] = bpf_program__fd(sk->progs.gen_pass);
	{
		__u32 id = 0;

		if (bpf_xdp_query_id((int)in_ifx[P_FWD], XDP_FLAGS_DRV_MODE, &id) || !id)
			die("the forwarder's program", ENOENT);
		gen_fd[P_FWD] = bpf_prog_get_fd_by_id(id);
		if (gen_fd[P_FWD] < 0)
			die("the forwarder's program", errno);
	}
}

static void add_rule(uint32_t ifx, const char *text)
{
	bench_rule_add(ictx, ifx, text);
}

/* n rules on the ingress of F's port ifx (0: none there), spread or not
 * (vars[]) */
static void set_rules(uint32_t ifx, int n, int spread)
{
	struct inj_rule rules[INJ_MAX_RULES];
	int have = inj_rule_list(ictx, rules, INJ_MAX_RULES);
	char rule[128];

	for (int i = 0; i < have; i++)
		if (rules[i].ifindex == ifx)
			inj_rule_del(ictx, rules[i].id);
	for (int i = 0; i < n - 1; i++) {
		if (spread)
			snprintf(rule, sizeof(rule), "qpn %d-%d psn %d-%d len %d-%d drop", 1 + i,
				 1000 + i, 2000 + i, 3000 + i, 100 + i, 1500 + i);
		else
			snprintf(rule, sizeof(rule), "qpn %d drop 1%%", 100000 + i);
		add_rule(ifx, rule);
	}
	if (n)
		add_rule(ifx, "qpn 0x11 psn 900-1100 len 1000-1200 count");
}

static double rate(enum path p, const uint8_t *frame, uint32_t len, uint64_t *lost);

/* --- tracing: the ring drained by a thread on another CPU, as rdma-inject
 * trace does */
static uint64_t trace_lost;

/* the rate through the forwarder with its ingress hook traced */
static double rate_traced(const uint8_t *frame, uint32_t len, uint64_t *lost)
{
	uint32_t ifs[1] = { in_ifx[P_FWD] };
	int dirs[1] = { INJ_DIR_INGRESS };
	struct inj_hook_ctr k0, k1;
	struct inj_ring *rb;
	char err[256];
	pthread_t th;
	double r;

	if (inj_trace_begin(ictx, ifs, dirs, 1, INJ_TRACE_SNAP_DEFAULT, err, sizeof(err)))
		die(err, EINVAL);
	rb = inj_ring_new(inj_trace_ring_fd(ictx), bench_count_rec, NULL);
	if (!rb)
		die("the trace ring", errno);
	cpu_set_t cpus;
	pthread_attr_t at;

	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);	/* the reader on the other CPU */
	pthread_attr_init(&at);
	pthread_attr_setaffinity_np(&at, sizeof(cpus), &cpus);
	bench_drain_stop = 0;
	inj_hook_counters(ictx, ifs[0], INJ_DIR_INGRESS, &k0);
	pthread_create(&th, &at, bench_drain, rb);
	pthread_attr_destroy(&at);
	r = rate(P_FWD, frame, len, lost);
	bench_drain_stop = 1;
	pthread_join(th, NULL);
	inj_hook_counters(ictx, ifs[0], INJ_DIR_INGRESS, &k1);
	trace_lost += k1.trace_lost - k0.trace_lost;
	inj_ring_free(rb);
	inj_trace_stop(ictx);
	inj_trace_end(ictx);
	inj_track_set(ictx, 0);	/* a trace leaves tracking on */
	return r;
}

static uint64_t sunk(void)
{
	return __atomic_load_n(&sk->bss->sunk, __ATOMIC_ACQUIRE);
}

/* frames per second through path p: what the sink counted over the time
 * from the first frame to the last count (the sink may finish after the
 * run returns); lost: frames sent that never arrived */
static double rate(enum path p, const uint8_t *frame, uint32_t len, uint64_t *lost)
{
	struct xdp_md xm = { .data_end = len, .ingress_ifindex = in_ifx[p] };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len, .ctx_in = &xm,
		    .ctx_size_in = sizeof(xm), .repeat = FRAMES, .batch_size = 64,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	uint64_t before = sunk(), last = before, now;
	double t0 = bench_now(), t_last;
	int r = bpf_prog_test_run_opts(gen_fd[p], &o);

	if (r)
		die("live frames (BPF_PROG_TEST_RUN)", r);
	t_last = bench_now();
	for (double idle = t_last; bench_now() - idle < 0.02;) {	/* 20 ms without one more */
		now = sunk();
		if (now != last) {
			last = now;
			idle = t_last = bench_now();
		}
	}
	*lost = FRAMES - (last - before);
	return (double)(last - before) / (t_last - t0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* LAT_N datagrams through path p, one at a time: their one-way times
 * appended to out (n: how many there) */
static void one_way(int fd, enum path p, uint64_t *out, size_t *n)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(4791) };
	uint8_t dgram[12 + PAYLOAD + 4] = { 0x0a, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0x03, 0xe8 };
	int lat_fd = bpf_map__fd(sk->maps.lat);
	char ip[32];

	snprintf(ip, sizeof(ip), "198.18.1%d.2", (int)p);
	inet_pton(AF_INET, ip, &to.sin_addr);
	sk->bss->nlat = 0;
	for (int i = 0; i < LAT_N; i++) {
		uint64_t was = sunk();
		double t0 = bench_now();

		if (sendto(fd, dgram, sizeof(dgram), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			die("sendto", errno);
		while (sunk() == was && bench_now() - t0 < 0.1)
			;	/* one in flight: no queue in the numbers */
	}
	for (uint32_t i = 0; i < sk->bss->nlat && i < LAT_N; i++) {
		uint64_t v;

		if (!bpf_map_lookup_elem(lat_fd, &i, &v))
			out[(*n)++] = v;
	}
}

static double pct(const uint64_t *v, size_t n, double q)
{
	return n ? (double)v[(size_t)(q * (double)(n - 1))] : 0;
}

static void pin_cpu0(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		die("sched_setaffinity", errno);
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static void report(double mpps[NVAR][PASSES], uint64_t lost[NVAR], uint64_t *lat[NVAR],
		   size_t nl[NVAR])
{
	double m[NVAR];

	printf("%-32s %8s %10s %9s %10s %10s\n", "path", "Mpps", "of plain", "lost", "p50[us]",
	       "p99[us]");
	for (int v = 0; v < NVAR; v++) {
		m[v] = bench_median(mpps[v], PASSES);
		qsort(lat[v], nl[v], sizeof(uint64_t), cmp_u64);
		printf("%-32s %8.2f %9.0f%% %9lld %10.2f %10.2f\n", vars[v].name, m[v],
		       100 * m[v] / m[0], (long long)lost[v], pct(lat[v], nl[v], 0.5) / 1e3,
		       pct(lat[v], nl[v], 0.99) / 1e3);
	}
	printf("forward with 64 rules: %.0f%% (other QPNs) and %.0f%% (spread) of plain XDP "
	       "forwarding (goal: at least 80%%); %.1fx and %.1fx the bridge with the tc injector's "
	       "same rules (goal: at least 5x)\n",
	       100 * m[V_FWD64] / m[0], 100 * m[V_FWD64S] / m[0], m[V_FWD64] / m[V_BR64],
	       m[V_FWD64S] / m[V_BR64S]);
	printf("64 rules (spread) add %.2f us at p50, %.2f us at p99 over plain XDP (one way)\n",
	       (pct(lat[V_FWD64S], nl[V_FWD64S], 0.5) - pct(lat[0], nl[0], 0.5)) / 1e3,
	       (pct(lat[V_FWD64S], nl[V_FWD64S], 0.99) - pct(lat[0], nl[0], 0.99)) / 1e3);
	printf("a traced frame: %+.0f ns over an untraced one (goal: within 100 ns); %llu records "
	       "drained, %llu lost (the ring had no room)\n",
	       1e3 / m[V_FWD1T] - 1e3 / m[V_FWD1], (unsigned long long)bench_drained,
	       (unsigned long long)trace_lost);
	printf("100 GbE: 12 Mpps at 1 KiB frames, 3 Mpps at 4 KiB: %.1f and %.1f such cores "
	       "with 64 rules (spread)\n", 12 / m[V_FWD64S], 3 / m[V_FWD64S]);
}

int main(void)
{
	struct frame_spec f = { .opcode = 0x0a, .dqpn = 0x11, .psn = 1000, .payload = PAYLOAD };
	double mpps[NVAR][PASSES];
	uint64_t lost[NVAR] = { 0 }, *lat[NVAR];
	size_t nl[NVAR] = { 0 };
	uint8_t frame[2048];
	uint32_t len;
	int sock, quick = !!getenv("FWD_BENCH_QUICK");

	if (geteuid()) {
		fprintf(stderr, "fwd_bench: needs root\n");
		return 77;
	}
	if (!getenv("FWD_BENCH_VERBOSE"))
		libbpf_set_print(quiet);
	atexit(teardown);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	sk = fwd_bench_bpf__open_and_load();
	if (!sk)
		die("the bench's programs", errno);
	make_paths();
	make_programs();
	enter(0);
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	if (sock < 0 || setsockopt(sock, SOL_SOCKET, SO_NO_CHECK, &(int){ 1 }, sizeof(int)))
		die("socket", errno);
	enter(1);
	pin_cpu0();
	for (int v = 0; v < NVAR; v++)
		lat[v] = calloc(PASSES * LAT_N, sizeof(uint64_t));
	printf("rdma-inject forward against plain XDP and the bridge: one CPU, veth, %d live frames "
	       "of %d B (RoCEv2 WRITE, 1 KiB payload) x %d passes (median); one-way times: %d a "
	       "path and pass, pooled\n",
	       FRAMES, (int)frame_build(frame, &f), PASSES, LAT_N);
	len = (uint32_t)frame_build(frame, &f);
	memcpy(frame, "\x02\x00\x00\x00\x12\x02", 6);	/* bb0: the bridge's table has it */
	sk->bss->magic = 0x5254425354414d50ULL;	/* "RTBSTAMP" */
	for (int k = 0; k < PASSES; k++)
		for (int v = 0; v < NVAR; v++) {
			uint64_t l;

			/* one table of 64 rules for every hook: this set's alone */
			set_rules(in_ifx[P_FWD], vars[v].path == P_FWD ? vars[v].rules : 0,
				  vars[v].spread);
			set_rules(in_ifx[P_BRIDGE], vars[v].path == P_BRIDGE ? vars[v].rules : 0,
				  vars[v].spread);
			mpps[v][k] = (vars[v].traced ? rate_traced(frame, len, &l) :
						       rate(vars[v].path, frame, len, &l)) / 1e6;
			lost[v] += l;
			if (!quick)	/* FWD_BENCH_QUICK: the rates alone, for trying changes */
				one_way(sock, vars[v].path, lat[v], &nl[v]);
		}
	report(mpps, lost, lat, nl);
	return 0;
}
