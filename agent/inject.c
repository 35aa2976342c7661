// SPDX-License-Identifier: MIT
/*
 * The node's injector and counters, for the controller:
 *   inject   runs rdma-inject (installed next to the agent) with the given
 *            arguments and returns its exit code and output. The injector
 *            keeps its state in the kernel, so any later call, or a flush,
 *            sees what earlier ones did. With "lease": true, rules added
 *            belong to the control connection: they go when it closes
 *            (a controller that vanishes leaves no faults behind).
 *   counters the device's hw counters (names discovered at run time).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"
#include "../ebpf/inject_abi.h"
#include "../lib/clock.h"
#include "../lib/log.h"
#include "../lib/proc.h"

extern char **environ;

#define INJECT_MAX_ARGS 48
#define INJECT_TIMEOUT_MS 60000

static int inject_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = 0;
	snprintf(buf, len, "%s/rdma-inject", dirname(exe));
	return access(buf, X_OK) ? -errno : 0;
}

/* read both pipes until EOF or the deadline; the milliseconds left */
static int drain(int fds[2], char *bufs[2], size_t caps[2], int timeout_ms)
{
	size_t used[2] = { 0, 0 };
	int open_n = 2, i;
	uint64_t t0 = rtb_now_ns();

	while (open_n) {
		struct pollfd p[2];
		int n = 0, idx[2], ms, pr;

		for (i = 0; i < 2; i++)
			if (fds[i] >= 0) {
				p[n].fd = fds[i];
				p[n].events = POLLIN;
				idx[n++] = i;
			}
		ms = timeout_ms - (int)((rtb_now_ns() - t0) / 1000000);
		if (ms <= 0)
			break;
		pr = poll(p, (nfds_t)n, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		for (i = 0; i < n; i++) {
			int k = idx[i];
			char sink[4096];
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (used[k] + 1 < caps[k])
				r = read(fds[k], bufs[k] + used[k], caps[k] - 1 - used[k]);
			else
				r = read(fds[k], sink, sizeof(sink));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				close(fds[k]);
				fds[k] = -1;
				open_n--;
			} else if (used[k] + 1 < caps[k]) {
				used[k] += (size_t)r;
			}
		}
	}
	for (i = 0; i < 2; i++) {
		bufs[i][used[i]] = 0;
		if (fds[i] >= 0)
			close(fds[i]);
	}
	return timeout_ms - (int)((rtb_now_ns() - t0) / 1000000);
}

/* run rdma-inject with args; *out / *errout are the outputs (free them) */
static int spawn_inject(char *const *args, int nargs, int *rc, char **out, char **errout,
			char *err, size_t errlen)
{
	char path[PATH_MAX], *argv[INJECT_MAX_ARGS + 3], *bufs[2];
	size_t caps[2] = { 1 << 20, 64 << 10 };
	int o[2], e[2], fds[2], r, i, n = 0, left;
	struct proc_io io = { -1, -1, -1, 0 };
	pid_t pid;

	if (inject_path(path, sizeof(path))) {
		snprintf(err, errlen, "inject: rdma-inject is not installed next to the agent");
		return -ENOENT;
	}
	argv[n++] = path;
	for (i = 0; i < nargs && i < INJECT_MAX_ARGS; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(o, O_CLOEXEC))
		return -errno;
	if (pipe2(e, O_CLOEXEC)) {
		close(o[0]);
		close(o[1]);
		return -errno;
	}
	io.out = o[1];
	io.err = e[1];
	r = -proc_spawn(argv, &io, &pid);
	close(o[1]);
	close(e[1]);
	bufs[0] = r ? NULL : malloc(caps[0]);
	bufs[1] = r ? NULL : malloc(caps[1]);
	if (r || !bufs[0] || !bufs[1]) {
		free(bufs[0]);
		free(bufs[1]);
		close(o[0]);
		close(e[0]);
		if (!r) {
			proc_stop(pid, 0);
			return -ENOMEM;
		}
		snprintf(err, errlen, "inject: cannot run %s: %s", path, strerror(r));
		return -r;
	}
	fds[0] = o[0];
	fds[1] = e[0];
	left = drain(fds, bufs, caps, INJECT_TIMEOUT_MS);
	/* its pipes close before it is a zombie: give it the rest of the
	 * deadline to finish exiting (a SIGKILL here looked like a crash) */
	if (proc_reap(pid, left > 0 ? left : 0, rc)) {
		kill(pid, SIGKILL);
		proc_reap(pid, -1, rc);
	}
	*out = bufs[0];
	*errout = bufs[1];
	return 0;
}

/* the id an "add" printed: "7" or, with -j, {"id": 7, ...} */
static unsigned int added_id(const char *out)
{
	json_t *j = json_loads(out, 0, NULL);
	unsigned int id = j ? (unsigned int)json_integer_value(json_object_get(j, "id")) :
			      (unsigned int)strtoul(out, NULL, 10);

	json_decref(j);
	return id;
}

/*
 * What a peer may ask of rdma-inject, as root: the output options, one verb
 * of this list, and that verb's words, none of which may look like an
 * option (so no --pin: the injector's state stays where it belongs). "run"
 * is not here: it blocks until a signal.
 */
/* interface name carries the agent's control address (or is loopback) */
static int is_control_if(const struct agent *a, const char *name)
{
	struct ifaddrs *all, *i;
	int hit = !strcmp(name, "lo");

	if (!a->listen_ip[0] || getifaddrs(&all))
		return hit;
	for (i = all; i && !hit; i = i->ifa_next) {
		char ip[INET6_ADDRSTRLEN] = "";

		if (!i->ifa_addr || strcmp(i->ifa_name, name))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
		hit = ip[0] && !strcmp(ip, a->listen_ip);
	}
	freeifaddrs(all);
	return hit;
}

static int inject_allowed(const struct agent *a, char *const *argv, int n, char *err,
			  size_t errlen)
{
	static const char *const verbs[] = { "add", "del", "set", "list", "stats",
					     "seed", "flush", "probe", "forward", "wait", NULL };
	int i = 0, k;

	while (i < n && (!strcmp(argv[i], "-j") || !strcmp(argv[i], "-v") || !strcmp(argv[i], "-q")))
		i++;
	if (i == n) {
		snprintf(err, errlen, "inject: no command");
		return -EINVAL;
	}
	for (k = 0; verbs[k] && strcmp(verbs[k], argv[i]); k++)
		;
	if (!verbs[k]) {
		snprintf(err, errlen, "inject: '%.40s' is not allowed (expected -j|-v|-q, then "
			 "add|del|set|list|stats|seed|flush|probe|forward|wait)", argv[i]);
		return -EPERM;
	}
	for (i++; i < n; i++) {
		if (argv[i][0] == '-' || !argv[i][0]) {
			snprintf(err, errlen, "inject: argument '%.40s' after '%s' is not allowed "
				 "(options go before the command; --pin never)", argv[i], verbs[k]);
			return -EPERM;
		}
		/* faults on the link the controller reaches the agent by would cut
		 * the controller off (and every lease with it) */
		if (!strcmp(argv[i], "dev") && i + 1 < n && is_control_if(a, argv[i + 1])) {
			snprintf(err, errlen, "inject: dev %.40s carries this agent's control address "
				 "(%s): no fault rules there", argv[i + 1], a->listen_ip);
			return -EPERM;
		}
		/* so would a forwarder on it: every port is checked (a MAC=PORT
		 * names one of them) */
		if (!strcmp(verbs[k], "forward") && strcmp(argv[i], "mac") &&
		    is_control_if(a, strchr(argv[i], '=') ? strchr(argv[i], '=') + 1 : argv[i])) {
			snprintf(err, errlen, "inject: forward: %.40s carries this agent's control "
				 "address (%s): no forwarder there", argv[i], a->listen_ip);
			return -EPERM;
		}
	}
	return 0;
}

/* the index of rdma-inject's verb in argv (after -j, -v, -q), n if none */
static int verb_at(char **argv, int n)
{
	int i;

	for (i = 0; i < n && argv[i][0] == '-'; i++)
		;
	return i;
}

/* the lease list follows the rules: add (leased) joins, del leaves. An
 * add that finds the list full returns its rule's id (it must not stay),
 * else 0 */
static unsigned int lease_follow(struct agent *a, unsigned int conn, char **argv, int n,
				 int lease, const char *out)
{
	unsigned int unleased = 0;
	int i = verb_at(argv, n), j;

	pthread_mutex_lock(&a->lock);
	if (i < n && !strcmp(argv[i], "forward"))	/* the forwarder lives with its connection */
		a->fwd_conn = i + 2 == n && !strcmp(argv[i + 1], "stop") ? 0 : conn;
	else if (i + 1 < n && !strcmp(argv[i], "del")) {
		unsigned int id = (unsigned int)strtoul(argv[i + 1], NULL, 10);

		for (j = 0; j < a->nleased; j++)
			if (a->leased[j].id == id)
				a->leased[j--] = a->leased[--a->nleased];
	} else if (lease && i < n && !strcmp(argv[i], "add")) {
		unsigned int id = added_id(out);

		if (id && a->nleased < (int)(sizeof(a->leased) / sizeof(a->leased[0]))) {
			a->leased[a->nleased].conn = conn;
			a->leased[a->nleased++].id = id;
		} else {
			unleased = id;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return unleased;
}

/* args' words into argv (a leased add gets a lease of AGENT_LEASE_MS: its
 * rule expires without us): their count, or -errno with err */
static int inject_argv(struct agent *a, json_t *args, char **argv, int *lease, char *err,
		       size_t errlen)
{
	static char lease_arg[16];
	json_t *list, *v;
	int n = 0, r, i;
	size_t k;

	if (json_unpack(args, "{s:o,s?b}", "args", &list, "lease", lease) ||
	    !json_is_array(list) || json_array_size(list) > INJECT_MAX_ARGS) {
		snprintf(err, errlen, "inject: expected {args: [...], lease?} (at most %d args)",
			 INJECT_MAX_ARGS);
		return -EINVAL;
	}
	json_array_foreach(list, k, v) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "inject: argument %zu is not a string", k);
			return -EINVAL;
		}
		argv[n++] = (char *)json_string_value(v);
	}
	if ((r = inject_allowed(a, argv, n, err, errlen)))
		return r;
	i = verb_at(argv, n);
	if (*lease && n + 2 <= INJECT_MAX_ARGS && i < n && !strcmp(argv[i], "add")) {
		snprintf(lease_arg, sizeof(lease_arg), "%dms", AGENT_LEASE_MS);
		argv[n++] = "lease";
		argv[n++] = lease_arg;
	}
	return n;
}

int inject_run(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	       size_t errlen)
{
	char *argv[INJECT_MAX_ARGS + 2], *out = NULL, *eout = NULL;
	int n, rc, r, lease = 0, i;
	unsigned int unleased = 0;
	uint64_t t0, ms;

	if ((n = inject_argv(a, args, argv, &lease, err, errlen)) < 0)
		return n;
	t0 = rtb_now_ns();
	r = spawn_inject(argv, n, &rc, &out, &eout, err, errlen);
	if (r)
		return r;
	ms = (rtb_now_ns() - t0) / 1000000;
	if (rc || ms >= 5000) {	/* in the agent's log: what failed or took long, and how */
		i = verb_at(argv, n);
		log_info("rdma-inject %s: %s %d after %llu ms%s%.*s", i < n ? argv[i] : "?",
			 rc > 128 ? "killed by signal" : "exit", rc > 128 ? rc - 128 : rc,
			 (unsigned long long)ms, eout[0] ? ": " : "", (int)strcspn(eout, "\n"), eout);
	}
	if (rc == 0)
		unleased = lease_follow(a, conn, argv, n, lease, out);
	if (unleased) {
		char idb[16], *dargs[2] = { "del", idb }, *o2 = NULL, *e2 = NULL, err2[128];
		int rc2;

		snprintf(idb, sizeof(idb), "%u", unleased);
		if (!spawn_inject(dargs, 2, &rc2, &o2, &e2, err2, sizeof(err2))) {
			free(o2);
			free(e2);
		}
		free(out);
		free(eout);
		snprintf(err, errlen, "inject: too many leased rules (%zu): rule %u removed again",
			 sizeof(a->leased) / sizeof(a->leased[0]), unleased);
		return -ENOSPC;
	}
	if (rc && !eout[0]) {	/* it said nothing: say how it ended */
		char *why = NULL;

		if (asprintf(&why, "rdma-inject %s %d (no message)\n",
			     rc > 128 ? "killed by signal" : "exited", rc > 128 ? rc - 128 : rc) > 0) {
			free(eout);
			eout = why;
		}
	}
	*result = json_pack("{s:i,s:s,s:s}", "rc", rc, "stdout", out, "stderr", eout);
	/* -j: the structured answer (the new rule of an add, the rules of a list) */
	if (*result && !rc && out[0] == '{')
		json_object_set_new(*result, "json", json_loads(out, 0, NULL));
	free(out);
	free(eout);
	return *result ? 0 : -ENOMEM;
}

/* bpf(2) without libbpf: the agent only needs to update one pinned map */
static int bpf_sys(int cmd, union bpf_attr *at)
{
	return (int)syscall(__NR_bpf, cmd, at, sizeof(*at));
}

/*
 * Every leased rule's deadline pushed to now + AGENT_LEASE_MS. The map is
 * opened by its pin each time: a flush unpins the maps and the next add
 * makes new ones, and an fd kept from before would renew the old, orphaned
 * map (a CI run's storage arm lost its delay rule 6 s in that way).
 */
static void renew_all(struct agent *a)
{
	uint64_t dl = rtb_now_ns() + (uint64_t)AGENT_LEASE_MS * 1000000ULL;
	union bpf_attr get = { 0 };
	unsigned int ids[64];
	int i, n, fd;

	pthread_mutex_lock(&a->lock);
	for (n = 0; n < a->nleased; n++)
		ids[n] = a->leased[n].id;
	pthread_mutex_unlock(&a->lock);
	if (!n)
		return;
	get.pathname = (uint64_t)(uintptr_t)INJ_PIN_DIR "/inj_leases";
	if ((fd = bpf_sys(BPF_OBJ_GET, &get)) < 0)
		return;
	for (i = 0; i < n; i++) {
		union bpf_attr at = { 0 };
		uint32_t id = ids[i];

		at.map_fd = (uint32_t)fd;
		at.key = (uint64_t)(uintptr_t)&id;
		at.value = (uint64_t)(uintptr_t)&dl;
		at.flags = BPF_EXIST;	/* only a rule still there: never one re-added */
		bpf_sys(BPF_MAP_UPDATE_ELEM, &at);
	}
	close(fd);
}

/* the renewer sleeps a third of a lease at a time, woken at once to stop
 * (a sleep of 0.1 s in a loop cost a fleet of 1,024 idle agents on one
 * host 10,000 wakeups a second) */
static pthread_mutex_t renew_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t renew_cv;

static void *renewer(void *arg)
{
	struct agent *a = arg;

	pthread_mutex_lock(&renew_mu);
	while (!__atomic_load_n(&a->stopping, __ATOMIC_ACQUIRE)) {
		struct timespec ts;

		pthread_mutex_unlock(&renew_mu);
		renew_all(a);
		pthread_mutex_lock(&renew_mu);
		rtb_deadline(&ts, AGENT_LEASE_MS / 3 / 1e3);
		if (!__atomic_load_n(&a->stopping, __ATOMIC_ACQUIRE))
			pthread_cond_timedwait(&renew_cv, &renew_mu, &ts);
	}
	pthread_mutex_unlock(&renew_mu);
	return NULL;
}

int inject_renewer_start(struct agent *a)
{
	pthread_condattr_t ca;
	int r;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&renew_cv, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&a->renewer, NULL, renewer, a);
	a->renewer_up = !r;
	return -r;
}

void inject_renewer_stop(struct agent *a)
{
	pthread_mutex_lock(&renew_mu);
	__atomic_store_n(&a->stopping, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&renew_cv);
	pthread_mutex_unlock(&renew_mu);
	if (a->renewer_up)
		pthread_join(a->renewer, NULL);
	a->renewer_up = 0;
}

/* a forwarder a connection started (conn 0: any) stopped with it, after its
 * rules (it takes nothing else down) */
static void forward_release(struct agent *a, unsigned int conn)
{
	char *args[2] = { "forward", "stop" }, *out = NULL, *eout = NULL, err[128];
	unsigned int owner;
	int rc;

	pthread_mutex_lock(&a->lock);
	owner = a->fwd_conn;
	if (owner && (!conn || conn == owner))
		a->fwd_conn = 0;
	pthread_mutex_unlock(&a->lock);
	if (!owner || (conn && conn != owner))
		return;
	if (!spawn_inject(args, 2, &rc, &out, &eout, err, sizeof(err))) {
		if (!rc)
			log_info("control connection %u gone: stopped the forwarder it started", owner);
		free(out);
		free(eout);
	}
}

int inject_release(struct agent *a, unsigned int conn)
{
	unsigned int ids[64];
	int i, n = 0, k = 0, rc, deleted = 0;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->nleased; i++) {
		if (!conn || a->leased[i].conn == conn)	/* 0: every connection's */
			ids[n++] = a->leased[i].id;
		else
			a->leased[k++] = a->leased[i];
	}
	a->nleased = k;
	a->releasing += n > 0;
	pthread_mutex_unlock(&a->lock);
	for (i = 0; i < n; i++) {
		char id[16], *args[2] = { "del", id }, *out = NULL, *eout = NULL, err[128];

		snprintf(id, sizeof(id), "%u", ids[i]);
		if (!spawn_inject(args, 2, &rc, &out, &eout, err, sizeof(err))) {
			deleted += !rc;
			free(out);
			free(eout);
		}
	}
	/* we removed rules their owner left behind (it died): when nobody's
	 * rules are left at all, the hooks and qdiscs go too. Not when the
	 * owner had removed them itself -- it also removes the qdiscs, and a
	 * flush here would race with whatever it does next. */
	if (deleted) {	/* one command: a rule someone adds meanwhile is never flushed */
		char *fargs[2] = { "flush", "if-empty" }, *out = NULL, *eout = NULL, err[128];

		if (!spawn_inject(fargs, 2, &rc, &out, &eout, err, sizeof(err))) {
			free(out);
			free(eout);
		}
	}
	if (n) {
		pthread_mutex_lock(&a->lock);
		a->releasing--;
		pthread_mutex_unlock(&a->lock);
	}
	forward_release(a, conn);
	return n;
}

void inject_quiesce(struct agent *a, int timeout_ms)
{
	int busy = 1;

	for (; timeout_ms > 0; timeout_ms -= 10) {
		pthread_mutex_lock(&a->lock);
		busy = a->releasing;
		pthread_mutex_unlock(&a->lock);
		if (!busy)
			return;
		usleep(10000);
	}
}

/* a pinned map of the injector's, by name (-1: none, the injector is not in use) */
static int inj_map(const char *name)
{
	union bpf_attr get = { 0 };
	char path[128];

	snprintf(path, sizeof(path), INJ_PIN_DIR "/%s", name);
	get.pathname = (uint64_t)(uintptr_t)path;
	return bpf_sys(BPF_OBJ_GET, &get);
}

static int map_lookup(int fd, const void *key, void *val)
{
	union bpf_attr at = { 0 };

	at.map_fd = (uint32_t)fd;
	at.key = (uint64_t)(uintptr_t)key;
	at.value = (uint64_t)(uintptr_t)val;
	return bpf_sys(BPF_MAP_LOOKUP_ELEM, &at);
}

static int map_update(int fd, const void *key, const void *val)
{
	union bpf_attr at = { 0 };

	at.map_fd = (uint32_t)fd;
	at.key = (uint64_t)(uintptr_t)key;
	at.value = (uint64_t)(uintptr_t)val;
	return bpf_sys(BPF_MAP_UPDATE_ELEM, &at);
}

/* every entry of a hash map deleted */
static void map_clear(int fd)
{
	uint8_t k[64];
	union bpf_attr at = { 0 };

	for (;;) {
		at.map_fd = (uint32_t)fd;
		at.key = 0;
		at.next_key = (uint64_t)(uintptr_t)k;
		if (bpf_sys(BPF_MAP_GET_NEXT_KEY, &at))
			return;
		at.key = (uint64_t)(uintptr_t)k;
		at.next_key = 0;
		if (bpf_sys(BPF_MAP_DELETE_ELEM, &at))
			return;
	}
}

/* the CPUs a per-CPU map has a value for (/sys/.../possible: "0-3") */
static long possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char buf[64] = "", *p, *tok, *save;
	long n = 0;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		long hi = strtol(tok, &p, 10);

		if (*p == '-')
			hi = strtol(p + 1, NULL, 10);
		if (hi + 1 > n)
			n = hi + 1;
	}
	return n > 0 ? n : sysconf(_SC_NPROCESSORS_CONF);
}

int agent_gid_netdev(const struct agent *a, char *name, size_t len)
{
	char path[320];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gid_attrs/ndevs/%d",
		 a->dev.name, a->dev.port, a->dev.gid_index);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(name, (int)len, f))
		name[0] = 0;
	fclose(f);
	name[strcspn(name, "\n")] = 0;
	return name[0] ? 0 : -ENODEV;
}

/* the netdev the agent's RoCE GID is on (its ifindex; 0: unknown) */
static unsigned int gid_ifindex(const struct agent *a)
{
	char name[IF_NAMESIZE + 2];

	return agent_gid_netdev(a, name, sizeof(name)) ? 0 : if_nametoindex(name);
}

/*
 * What injector/inj.c's inj_qp_reset and inj_track_set do, in raw bpf(2)
 * (the agent does not link libbpf): the QPs and PSN transmissions
 * forgotten, the next QP index of every attached hook back to 1, tracking on.
 */
void inject_track_begin(struct agent *a)
{
	int qfd = inj_map("inj_qps"), tfd = inj_map("inj_tx"), nfd = inj_map("inj_qp_next");
	int sfd = inj_map("inj_track"), hfd = inj_map("inj_hooks");
	uint32_t zero = 0, on = INJ_TRACK_QP, key, next;
	union bpf_attr at = { 0 };
	struct inj_qp_next z = { 0 };
	int fds[5] = { qfd, tfd, nfd, sfd, hfd }, i, first = 1;

	(void)a;
	if (qfd >= 0)
		map_clear(qfd);
	if (tfd >= 0)
		map_clear(tfd);
	while (hfd >= 0 && nfd >= 0) {	/* only the hooks there are: a few, not INJ_MAX_HOOKS */
		struct inj_hook hv;

		at.map_fd = (uint32_t)hfd;
		at.key = first ? 0 : (uint64_t)(uintptr_t)&key;
		at.next_key = (uint64_t)(uintptr_t)&next;
		if (bpf_sys(BPF_MAP_GET_NEXT_KEY, &at))
			break;
		key = next;
		first = 0;
		if (!map_lookup(hfd, &key, &hv))
			map_update(nfd, &hv.slot, &z);
	}
	if (sfd >= 0)
		map_update(sfd, &zero, &on);
	for (i = 0; i < 5; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* the injector's counters of the hooks on the agent's RoCE netdev:
 * {"egress": {"roce_pkts": n, "resent": n}, "ingress": {...}}, only the
 * hooks attached ({} when none) */
static json_t *inject_hook_counts(struct agent *a)
{
	static const char *const dirs[2] = { "ingress", "egress" };
	int hfd = inj_map("inj_hooks"), cfd = inj_map("inj_hook_ctrs");
	unsigned int ifx;
	long ncpu;
	json_t *o = json_object();

	/* the netdev and the CPU count do not change: found once */
	if (!__atomic_load_n(&a->netdev_ifindex, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&a->ncpu, possible_cpus(), __ATOMIC_RELAXED);
		__atomic_store_n(&a->netdev_ifindex, gid_ifindex(a), __ATOMIC_RELEASE);
	}
	ifx = a->netdev_ifindex;
	ncpu = a->ncpu;
	struct inj_hook_ctr *per;
	uint32_t d, hk;

	per = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*per)) : NULL;
	for (d = 0; per && ifx && hfd >= 0 && cfd >= 0 && d < 2; d++) {
		struct inj_hook hv;
		uint64_t pkts = 0, resent = 0;
		long c;

		hk = inj_hook_key(ifx, d);
		if (map_lookup(hfd, &hk, &hv) || map_lookup(cfd, &hv.slot, per))
			continue;
		for (c = 0; c < ncpu; c++) {
			pkts += per[c].roce_pkts;
			resent += per[c].resent;
		}
		json_object_set_new(o, dirs[d], json_pack("{s:I,s:I}", "roce_pkts", (json_int_t)pkts,
							  "resent", (json_int_t)resent));
	}
	free(per);
	if (hfd >= 0)
		close(hfd);
	if (cfd >= 0)
		close(cfd);
	return o;
}

int hw_counters(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	char dir[256], path[512], line[64];
	struct dirent **ents;
	json_t *o;
	int n, i;

	if (json_is_true(json_object_get(args, "track_begin")))	/* an exec round starts */
		inject_track_begin(a);
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%u/hw_counters", a->dev.name,
		 a->dev.port);
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		snprintf(err, errlen, "%s: no hw counters: %s", dir, strerror(errno));
		return -errno;
	}
	o = json_object();
	for (i = 0; i < n; i++) {
		FILE *f;

		if (ents[i]->d_name[0] != '.' && strcmp(ents[i]->d_name, "lifespan")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			f = fopen(path, "re");
			if (f) {
				if (fgets(line, sizeof(line), f))
					json_object_set_new(o, ents[i]->d_name,
							    json_integer(strtoll(line, NULL, 10)));
				fclose(f);
			}
		}
		free(ents[i]);
	}
	free(ents);
	*result = json_pack("{s:s,s:o,s:o}", "dev", a->dev.name, "hw_counters", o, "injector",
			    inject_hook_counts(a));
	return 0;
}
