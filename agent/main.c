// SPDX-License-Identifier: MIT
/*
 * rdma-agent: one per node, bound to one RDMA device/port/GID; serves the
 * controller (rdmactl) over an authenticated TCP control channel.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "agent.h"
#include "../lib/clock.h"
#include "../lib/log.h"
#include "../lib/opt.h"
#include "../workloads/wl.h"
#include "../lib/num.h"

struct conn_arg {
	struct agent *a;
	int fd, slot;
};

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void *conn_thread(void *p)
{
	struct conn_arg c = *(struct conn_arg *)p;

	/* nothing of ours outlives agent_conn_put: the shutdown waits for it,
	 * then the process exits (LeakSanitizer saw a conn_arg freed after) */
	free(p);
	agent_serve_conn(c.a, c.fd, c.slot, NULL, NULL);
	agent_conn_put(c.a, c.slot);
	return NULL;
}

/* a connection with no slot: closed at once, said at most once a second */
static void refuse(int fd, const char *peer, const char *why)
{
	static struct log_limit lim;

	close(fd);
	log_limited(&lim, "control: refused a connection from %s: %s", peer, why);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdma-agent [--dev DEV] --token-file FILE [options]\n"
		"       rdma-agent --no-rdma --token-file FILE [options]\n"
		"  -d, --dev DEV          RDMA device (e.g. rxe0; default: the first whose port\n"
		"                         is ACTIVE on Ethernet, as ibv_devices lists them)\n"
		"      --no-rdma          no device: the control plane only (ping, hello, inject;\n"
		"                         every workload refused), for control-plane scale tests\n"
		"  -i, --ib-port N        device port (default 1)\n"
		"  -x, --gid-index N      GID index (default: the RoCE v2 IPv4 GID, found at run time)\n"
		"  -l, --listen ADDR:PORT control channel address (default 127.0.0.1:47100;\n"
		"                         with --join: none unless given)\n"
		"  -J, --join HOST:PORT   dial the controller there (rdmactl's hosts: {join: ...}):\n"
		"                         no inbound port; dialed again while it is away\n"
		"  -t, --token-file FILE  shared secret the controller must present\n"
		"  -n, --name NAME        node name reported to the controller (default: DEV)\n"
		"  -m, --metrics ADDR:PORT  an OpenMetrics (Prometheus) endpoint, GET /metrics:\n"
		"                         arms, hw counters, injector counts; read-only, no token,\n"
		"                         off by default (e.g. 127.0.0.1:9464)\n"
		"  -v, --verbose          log every request\n"
		"  -L, --list             every workload's options (what profiles and rdmactl take)\n"
		"  -h, --help\n");
}

struct agent_args {
	const char *dev, *listen_at, *token_file, *name, *metrics, *join;
	uint64_t port, gidx;
	int have_gidx, no_rdma;
};

/* 0 to run, 1 after --help/--list, 2 bad usage (message printed) */
static int parse_args(int argc, char **argv, struct agent_args *o)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "list", no_argument, NULL, 'L' },
		{ "no-rdma", no_argument, NULL, 'N' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "join", required_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	int c, r;

	while ((c = getopt_long(argc, argv, "d:i:x:l:t:n:m:J:vhL", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'i':
			if (num_parse(optarg, NUM_PLAIN, 1, 255, &o->port, &why)) {
				log_err("--ib-port '%s': %s", optarg, why);
				return 2;
			}
			break;
		case 'x':
			if (num_parse(optarg, NUM_PLAIN, 0, 1023, &o->gidx, &why)) {
				log_err("--gid-index '%s': %s", optarg, why);
				return 2;
			}
			o->have_gidx = 1;
			break;
		case 'l': o->listen_at = optarg; break;
		case 't': o->token_file = optarg; break;
		case 'n': o->name = optarg; break;
		case 'm': o->metrics = optarg; break;
		case 'J': o->join = optarg; break;
		case 'N': o->no_rdma = 1; break;
		case 'v': log_verbose++; break;
		case 'h': usage(stdout); return 1;
		case 'L':
			for (r = 0; wl_at(r); r++) {
				printf("%s%s:\n", r ? "\n" : "", wl_at(r)->name);
				opt_help(wl_at(r)->opts, stdout);
			}
			return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (o->dev && o->no_rdma) || !o->token_file) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* accept until told to quit: one detached thread per connection, within
 * the caps of conn.c */
static void serve(struct agent *a, int lfd)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!quit) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		struct conn_arg *ca;
		const char *why;
		char peer[64];
		pthread_t t;
		int one = 1;
		int fd, slot;

		if (poll(&p, 1, 500) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		/* a frame's writes go out at once: with Nagle the second of two
		 * writes waits for rdmactl's delayed ACK, 40 ms a handshake
		 * (testbed status over 256 agents: 11.5 s) */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		net_peer_ip(fd, peer, sizeof(peer));
		if ((slot = agent_conn_take(a, fd, peer, &why)) < 0) {
			refuse(fd, peer, why);
			continue;
		}
		ca = malloc(sizeof(*ca));
		if (!ca) {
			agent_conn_put(a, slot);
			close(fd);
			continue;
		}
		ca->a = a;
		ca->fd = fd;
		ca->slot = slot;
		if (pthread_create(&t, &attr, conn_thread, ca)) {
			agent_conn_put(a, slot);
			free(ca);
			close(fd);
		}
	}
	pthread_attr_destroy(&attr);
}

/* no --dev: the first device whose port is ACTIVE on Ethernet (a Slurm
 * launch on nodes of one kind). 0, or -ENODEV said */
static int pick_dev(struct agent_args *o, char *name, size_t len)
{
	int n, r = vb_dev_pick((uint8_t)o->port, name, len, &n);

	if (r) {
		log_err("no --dev, and no RDMA device with port %u ACTIVE on Ethernet "
			"(ibv_devinfo lists them)", (unsigned)o->port);
		return r;
	}
	log_info("no --dev: %s, the first of %d with port %u ACTIVE", name, n,
		 (unsigned)o->port);
	o->dev = name;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_args o = { .port = 1 };
	static struct agent a;
	char picked[64];
	struct sigaction sa;
	int lfd, r, rc = 1;

	log_set_prog("rdma-agent");
	r = parse_args(argc, argv, &o);
	if (r)
		return r == 1 ? 0 : 2;
	r = proto_token_load(o.token_file, a.token, sizeof(a.token));
	if (r) {
		log_err("%s: cannot use as token file: %s", o.token_file,
			r == -EINVAL ? "expected one line of 16..128 [A-Za-z0-9_-]" : strerror(-r));
		return 2;
	}
	if (!o.dev && !o.no_rdma && pick_dev(&o, picked, sizeof(picked)))
		return 1;
	snprintf(a.name, sizeof(a.name), "%s", o.name ? o.name : o.dev ? o.dev : "agent");
	pthread_mutex_init(&a.lock, NULL);
	pthread_rwlock_init(&a.dev_rw, NULL);
	a.gid_index_arg = o.have_gidx ? (int)o.gidx : -1;
	agent_conns_init(&a);

	a.no_rdma = o.no_rdma;
	snprintf(a.dev.name, sizeof(a.dev.name), "-");
	r = a.no_rdma ? 0 :
			vb_dev_open(&a.dev, o.dev, (uint8_t)o.port,
				    o.have_gidx ? (int)o.gidx : -1, 10000);
	if (r) {
		log_err("%s: cannot open device: %s", o.dev,
			r == -ENOENT ? "no RoCE v2 IPv4 GID (is an IPv4 address on its netdev?)" :
				       strerror(-r));
		goto destroy_lock;
	}
	if (!o.listen_at && !o.join)
		o.listen_at = "127.0.0.1:47100";
	lfd = -1;	/* joined only: no inbound port (poll ignores it) */
	if (o.listen_at) {
		snprintf(a.listen_ip, sizeof(a.listen_ip), "%.*s", (int)strcspn(o.listen_at, ":"),
			 o.listen_at);
		lfd = net_listen(o.listen_at);
		if (lfd < 0) {
			log_err("%s: cannot listen: %s", o.listen_at, strerror(-lfd));
			goto close_dev;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* its terminal or ssh session gone: clean up as for TERM */
	signal(SIGPIPE, SIG_IGN);
	log_info("%s: serving %s (gid index %d)%s%s%s%s", a.name, a.dev.name, a.dev.gid_index,
		 o.listen_at ? " on " : "", o.listen_at ? o.listen_at : "",
		 o.join ? ", joining " : "", o.join ? o.join : "");
	if (o.join && (r = agent_join_start(&a, o.join))) {
		log_err("--join %s: %s", o.join, r == -EINVAL ? "expected HOST:PORT" : strerror(-r));
		agent_shutdown(&a);
		if (lfd >= 0)
			close(lfd);
		goto close_dev;
	}
	if (inject_renewer_start(&a))
		log_info("cannot start the lease renewer: leased rules will expire");
	if (o.metrics) {
		r = metrics_start(&a, o.metrics);
		if (r) {
			log_err("--metrics %s: cannot listen: %s", o.metrics, strerror(-r));
			agent_join_stop();
			agent_shutdown(&a);
			if (lfd >= 0)
				close(lfd);
			goto close_dev;
		}
		log_info("%s: OpenMetrics at http://%s/metrics", a.name, o.metrics);
	}
	serve(&a, lfd);
	metrics_stop();
	rc = 0;
	log_info("%s: shutting down", a.name);
	agent_join_stop();	/* no new connection while the others close */
	agent_shutdown(&a);
	if (lfd >= 0)
		close(lfd);
close_dev:
	if (!a.no_rdma)
		vb_dev_close(&a.dev);
destroy_lock:
	pthread_rwlock_destroy(&a.dev_rw);
	pthread_mutex_destroy(&a.lock);
	return rc;
}
