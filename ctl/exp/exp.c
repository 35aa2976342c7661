// SPDX-License-Identifier: MIT
/*
 * Opening and closing an experiment (exp.h): the report directory (built
 * as DIR.partial, renamed when complete, so DIR never holds half a
 * report), the testbed or the profile's hosts, one
 * control connection per node, the fault rules on each node's own agent,
 * leased to that connection: if rdmactl dies, the agents remove them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "ctl/exp/expect.h"
#include "ctl/exp/inject.h"
#include "lib/log.h"
#include "lib/proto.h"

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void exp_default_dir(char *buf, size_t len, const char *name, const char *suffix)
{
	time_t t = time(NULL);
	struct tm tm;
	char ts[32];

	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, len, "runs/%s-%s%s", name, ts, suffix);
}

/* a real directory (not a link to one) with nothing in it, such as one
 * mktemp -d just made: the finished report is renamed over it */
static int empty_dir(const char *path)
{
	struct stat st;
	struct dirent *d;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	DIR *dir;
	int n = 0;

	if (!strcmp(base, ".") || !strcmp(base, "..") ||	/* cannot be renamed over */
	    lstat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dir);
	return n == 0;
}

/* does the profile give its commands any environment of its own */
static int profile_has_env(const struct profile *p)
{
	int i;

	if (json_object_size(json_object_get(p->wopts, "env")))
		return 1;
	for (i = 0; i < p->nroles; i++)
		if (json_object_size(p->role[i].env))
			return 1;
	for (i = 0; i < p->narms; i++)
		if (json_object_size(json_object_get(p->arm[i].opts, "env")))
			return 1;
	return 0;
}

/*
 * DIR.partial, ours alone: made by this mkdir (an existing one, a symlink
 * another user planted there included, is refused), opened without
 * following a link, checked to be the directory we made, and then reached
 * only through its descriptor (exp.h).
 */
static int make_partial(struct exp *e)
{
	char parent[PATH_MAX + 32], *slash;
	struct stat st;
	int fd;

	snprintf(e->tmpname, sizeof(e->tmpname), "%s.partial", e->dir);
	snprintf(parent, sizeof(parent), "%s", e->tmpname);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (ctl_mkdir_p(parent, 0755)) {
			log_err("%s: %s", parent, strerror(errno));
			goto fail;
		}
	}
	/* an exec profile's env may hold secrets, and the profile's text goes
	 * into report.json: then the directory is its owner's alone */
	if (mkdir(e->tmpname, profile_has_env(&e->p) ? 0700 : 0755)) {
		if (errno == EEXIST)
			log_err("%s exists (a run under way, one that died, or planted by someone "
				"else): remove it or give another -o DIR", e->tmpname);
		else
			log_err("%s: %s", e->tmpname, strerror(errno));
		goto fail;
	}
	fd = open(e->tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		log_err("%s: not the directory this run made (replaced under it?)", e->tmpname);
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	e->tmpfd = fd;
	snprintf(e->tmpdir, sizeof(e->tmpdir), "/proc/self/fd/%d", fd);
	return 0;
fail:
	e->tmpname[0] = '\0';
	return CTL_FAIL;
}

/* the same directory as our descriptor (not one put at its name since) */
int exp_partial_is_ours(const struct exp *e, const char *path)
{
	struct stat a, b;

	return !fstat(e->tmpfd, &a) && !lstat(path, &b) && S_ISDIR(b.st_mode) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* the report directory: -o, the profile's, or runs/NAME-TIMESTAMP; 2 if it
 * exists, unless as an empty directory */
static int pick_dir(struct exp *e, const char *outarg)
{
	if (e->o.no_report)
		return 0;
	if (outarg)
		snprintf(e->dir, sizeof(e->dir), "%s", outarg);
	else if (e->p.outdir[0])
		snprintf(e->dir, sizeof(e->dir), "%s", e->p.outdir);
	else
		exp_default_dir(e->dir, sizeof(e->dir), e->p.name, "");
	/* "out/" names out: its .partial beside it, not inside */
	for (size_t n = strlen(e->dir); n > 1 && e->dir[n - 1] == '/'; n--)
		e->dir[n - 1] = '\0';
	if (!access(e->dir, F_OK) && !empty_dir(e->dir)) {
		log_err("%s exists and is not an empty directory: give another -o DIR", e->dir);
		return CTL_USAGE;
	}
	return make_partial(e);
}

/* a testbed that fits the profile: the running one, or a new one */
static int ensure_testbed(struct exp *e)
{
	const struct profile *p = &e->p;
	struct tb_up_opts o = TB_UP_DEFAULTS;
	struct tb_state s;
	int r;

	e->brought_up = 0;
	if (e->o.need_testbed) {	/* a command's: whatever testbed is up */
		r = tb_load_rdma(&s);
		if (r == -ENOENT)
			log_err("no testbed is up (rdmactl testbed up)");
		return r;
	}
	r = tb_load_rdma(&s);
	if (r == -EOPNOTSUPP)
		return r;
	if (!r) {
		if (s.nodes < p->nodes || s.mtu != p->mtu) {
			log_err("a testbed of %d nodes, MTU %d is up; the profile wants %d nodes, MTU %d "
				"('rdmactl testbed down' first)", s.nodes, s.mtu, p->nodes, p->mtu);
			return -EEXIST;
		}
		if (p->topology >= 0 && (s.backend != TB_VM || (int)s.topology != p->topology)) {
			log_err("a testbed of backend %s%s%s is up; the profile wants topology %s "
				"('rdmactl testbed down' first)", tb_backend_name(s.backend),
				s.backend == TB_VM ? ", topology " : "",
				s.backend == TB_VM ? tb_topology_name(s.topology) : "",
				tb_topology_name((enum tb_topology)p->topology));
			return -EEXIST;
		}
		if (p->sw >= 0 && s.switch_xdp != p->sw) {
			log_err("a testbed whose switch is %s is up; the profile wants %s ('rdmactl "
				"testbed down' first)", s.switch_xdp ? "xdp" : "the bridge",
				p->sw ? "xdp" : "the bridge");
			return -EEXIST;
		}
		log_info("reusing the running testbed (%d nodes)", s.nodes);
		return 0;
	}
	o.nodes = p->nodes;
	o.mtu = p->mtu;
	if (p->topology >= 0) {
		o.topology = (enum tb_topology)p->topology;
		if (!strcmp(p->backend, "auto") && o.topology == TB_PER_NODE)
			o.backend = TB_VM;	/* only the vm backend has one */
	}
	o.switch_xdp = p->sw == 1;
	if ((o.backend == TB_AUTO && tb_backend_parse(p->backend, &o.backend)) || tb_up(&o))
		return -EIO;
	e->brought_up = 1;
	return 0;
}

/* the profile's own hosts: agents already running (one shared token), or
 * started over ssh (a fresh token, forwarded ports) */
static int open_hosts(struct exp *e)
{
	struct tb_state s;
	int i, r;

	memset(&s, 0, sizeof(s));
	s.backend = TB_HOSTS;
	s.nodes = e->p.nhosts;
	snprintf(s.accel, sizeof(s.accel), "-");
	for (i = 0; i < e->p.nhosts; i++) {
		snprintf(s.node[i].name, sizeof(s.node[i].name), "%s", e->p.host[i].name);
		snprintf(s.node[i].host, sizeof(s.node[i].host), "%s", e->p.host[i].addr);
		snprintf(s.node[i].dev, sizeof(s.node[i].dev), "-");
		s.node[i].port = e->p.host[i].port;
	}
	if (e->p.ssh.on) {
		if (e->o.print && !e->ctl->json)
			log_info("starting %d agents over ssh", e->p.nhosts);
		if (ssh_agents_start(&e->ssh, &e->p, &s))
			return -EIO;
	} else if (e->p.slurm.on) {	/* a fresh token, for srun's stdin */
		if (proto_token_new(s.token, sizeof(s.token))) {
			log_err("cannot make a token: no random bytes from the kernel");
			return -EIO;
		}
	} else {
		r = agentc_token_load(e->p.token_file, s.token, sizeof(s.token));
		if (r)
			return r;
	}
	if (e->p.join.on) {	/* they dial us: listen, and wait for every one */
		const char *names[16];
		char err[1024];

		for (i = 0; i < e->p.nhosts; i++) {
			names[i] = e->p.host[i].name;
			snprintf(s.node[i].host, sizeof(s.node[i].host), "%s", JOIN_HOST);
			s.node[i].port = 0;
		}
		if (!(r = join_listen(e->p.join.listen, s.token, err, sizeof(err))) &&
		    e->p.slurm.on) {
			if (e->o.print && !e->ctl->json)
				log_info("starting %d agents with srun (job %s, %d of its %d nodes), "
					 "joining %s", e->p.nhosts, getenv("SLURM_JOB_ID") ?: "?",
					 e->p.nhosts, e->p.slurm.nalloc, e->p.slurm.dial);
			char hn[PROF_MAX_HOSTS][32];

			for (i = 0; i < e->p.nhosts; i++)
				snprintf(hn[i], sizeof(hn[i]), "%s", e->p.host[i].name);
			if ((r = slurm_agents_start(&e->slurm, hn, e->p.nhosts, e->p.slurm.dev,
						    e->p.slurm.dial, s.token)))
				snprintf(err, sizeof(err), "srun: %s", strerror(-r));
		}
		if (r || (r = join_wait(names, e->p.nhosts, (double)e->p.join.wait_ns / 1e9,
					!e->o.print || e->ctl->json, err, sizeof(err),
					e->p.slurm.on ? slurm_agents_gone : NULL, &e->slurm))) {
			log_err("%s", err);
			join_stop();
			return r;
		}
		e->joined = 1;
	}
	return group_open_state(&e->g, &s);
}

/* the testbed's first p.nodes nodes (0: all), or the ones asked for */
static int open_testbed(struct exp *e)
{
	char nodes[256] = "";
	int i, r = ensure_testbed(e);

	if (r)
		return r;
	if (e->o.nodes || !e->p.nodes)
		return group_open(&e->g, e->o.nodes);
	for (i = 0; i < e->p.nodes; i++)
		snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%snode%d", i ? "," : "",
			 i);
	return group_open(&e->g, nodes);
}

struct agentc *exp_fault_at(struct exp *e, const struct prof_fault *f, int k, char *dev,
			    size_t len)
{
	int node = e->g.node[k];

	if (e->p.nhosts) {	/* the host's own interface names */
		snprintf(dev, len, "%s", f->sw ? e->p.host[node].sw : e->p.host[node].nic);
		if (f->sw && e->p.host[node].swi >= 0)	/* a switch host's port */
			return &e->swh[e->p.host[node].swi];
	} else if (f->sw && exp_per_node(e))
		tb_switch_port(node, dev, len);
	else
		snprintf(dev, len, "%s%d", f->sw ? "sw" : "n", node);
	return f->sw && exp_per_node(e) ? &e->sw : &e->g.c[k];
}

/* arms_obs.lost: a member's failure explained by a node fault since its
 * arm began (2: of its own node) */
static int exp_lost(void *arg, const struct agentc *c)
{
	struct exp *e = arg;
	unsigned gen[TB_MAX_NODES];
	int k, n, any = 0;

	if (!e->nf)
		return 0;
	exp_nodes_gens(e, gen);
	for (n = 0; n < TB_MAX_NODES; n++)
		any |= gen[n] != e->arm_gen[n];
	for (k = 0; k < e->g.n; k++)
		if (c == &e->g.c[k])
			return gen[e->g.node[k]] != e->arm_gen[e->g.node[k]] ? 2 : any;
	return any;
}

/* the injector c's rdma-inject runs in: members whose hello gave the same
 * boot id and bpffs share one ("": none known, c's alone) */
static const char *inj_key(const struct exp *e, const struct agentc *c)
{
	int k;

	for (k = 0; k < e->g.n; k++)
		if (c == &e->g.c[k])
			return e->inj_key[k];
	return "";
}

void exp_stats_fetch(struct exp *e, struct agentc *const *cs, int n, json_t **st)
{
	size_t m = (size_t)(n > 0 ? n : 1);
	struct agentc **ask = calloc(m, sizeof(*ask));
	json_t **got = calloc(m, sizeof(*got));
	int *from = calloc(m, sizeof(*from)), na = 0, i, j;

	for (i = 0; i < n; i++)
		st[i] = NULL;
	if (!ask || !got || !from)
		goto out;
	for (i = 0; i < n; i++) {
		const char *key = inj_key(e, cs[i]);

		for (j = 0; j < i; j++)
			if (cs[j] == cs[i] ||
			    (*key && cs[j]->fd >= 0 && !strcmp(key, inj_key(e, cs[j]))))
				break;
		if (j < i) {
			from[i] = from[j];
			continue;
		}
		from[i] = na;
		ask[na++] = cs[i];
	}
	inject_json_all(ask, na, "stats", NULL, got);
	for (i = 0; i < n; i++)
		st[i] = json_incref(got[from[i]]);
	for (j = 0; j < na; j++)
		json_decref(got[j]);
out:
	free(ask);
	free(got);
	free(from);
}

/* from member *k on, the next one fault i is placed on whose agent is
 * connected: that agent, and the rule's device in dev; NULL: none left */
static struct agentc *exp_fault_next(struct exp *e, int i, int *k, char *dev, size_t len)
{
	const struct prof_fault *f = &e->p.fault[i];

	for (; *k < e->g.n; (*k)++) {
		struct agentc *c;

		if (e->ids[i][*k] < 0 || !(f->nodes & (1u << e->g.node[*k])))
			continue;
		c = exp_fault_at(e, f, *k, dev, len);
		if (c->fd >= 0)
			return c;
	}
	return NULL;
}

json_t *exp_faults_each(struct exp *e, exp_place_fn *fn)
{
	struct place {
		int i, k;
		char dev[32];
		json_t *into;
	} *p = calloc(PROF_MAX_FAULTS * TB_MAX_NODES, sizeof(*p));
	struct agentc *cs[PROF_MAX_FAULTS * TB_MAX_NODES + 1] = { 0 };
	json_t *out = json_object(), *st[PROF_MAX_FAULTS * TB_MAX_NODES];
	int i, k, n = 0;

	if (!p)
		return out;
	for (i = 0; i < e->p.nfaults; i++) {
		json_t *into;

		if (e->p.fault[i].event)
			continue;
		into = json_object();
		json_object_set_new(out, e->p.fault[i].name, into);
		for (k = 0; (cs[n] = exp_fault_next(e, i, &k, p[n].dev, sizeof(p[n].dev))); k++) {
			p[n].i = i;
			p[n].k = k;
			p[n++].into = into;
		}
	}
	exp_stats_fetch(e, cs, n, st);	/* every injector asked at once, and once */
	for (i = 0; i < n; i++) {
		fn(e, p[i].i, p[i].k, st[i], p[i].dev, p[i].into);
		json_decref(st[i]);
	}
	free(p);
	return out;
}

/* the counters of fault i's rule on member k into sum */
static void add_counters(struct exp *e, int i, int k, const json_t *stats, const char *dev,
			 json_t *sum)
{
	const json_t *x;
	size_t m;

	(void)dev;
	json_array_foreach(json_object_get(stats, "rules"), m, x) {
		const char *key;
		json_t *v;

		if (json_integer_value(json_object_get(x, "id")) != e->ids[i][k])
			continue;
		json_object_foreach(json_object_get(x, "counters"), key, v)
			json_object_set_new(sum, key, json_integer(
				json_integer_value(json_object_get(sum, key)) + json_integer_value(v)));
	}
}

json_t *exp_faults_read(struct exp *e)
{
	return exp_faults_each(e, add_counters);
}

json_t *exp_faults_delta(const json_t *a, const json_t *b)
{
	json_t *out = json_object(), *fb, *v;
	const char *name, *key;

	json_object_foreach((json_t *)b, name, fb) {
		const json_t *fa = json_object_get(a, name);
		json_t *d = json_object();

		json_object_foreach(fb, key, v)
			json_object_set_new(d, key, json_integer(json_integer_value(v) -
						json_integer_value(json_object_get(fa, key))));
		json_object_set_new(out, name, d);
	}
	return out;
}

int exp_fault_place(struct exp *e, int i, int k, char *err, size_t errlen)
{
	const struct prof_fault *f = &e->p.fault[i];
	json_t *rules = json_object_get(json_array_get(e->faults, (size_t)i), "rules"), *rule;
	const char *node = e->g.tb.node[e->g.node[k]].name;
	char dev[32];
	struct agentc *c = exp_fault_at(e, f, k, dev, sizeof(dev));
	size_t j;

	if (c->fd < 0) {
		snprintf(err, errlen, "%s: not connected", c->where);
		return -EIO;
	}
	e->ids[i][k] = inject_fault_add(c, f, dev, err, errlen);
	if (e->ids[i][k] < 0)
		return -EIO;
	json_array_foreach(rules, j, rule)	/* placed again: its new id */
		if (!strcmp(json_string_value(json_object_get(rule, "node")) ?: "", node)) {
			json_object_set_new(rule, "id", json_integer(e->ids[i][k]));
			return 0;
		}
	json_array_append_new(rules, json_pack("{s:s,s:i}", "node", node, "id", e->ids[i][k]));
	return 0;
}

/* every fault of the profile on each of its nodes' agents (a switch port of
 * per-node VMs: on the switch's) */
static int add_faults(struct exp *e)
{
	int i, k;

	for (i = 0; i < e->p.nfaults; i++) {
		const struct prof_fault *f = &e->p.fault[i];
		json_t *fj;

		if (f->event) {	/* a node fault: the timeline's thread does it */
			json_t *nodes = json_array();

			for (k = 0; k < e->g.n; k++)
				if (f->nodes & (1u << e->g.node[k]))
					json_array_append_new(nodes, json_string(
						e->g.tb.node[e->g.node[k]].name));
			json_array_append_new(e->faults,
					      json_pack("{s:s,s:s,s:s,s:I,s:I,s:o,s:s}", "name", f->name,
							"event", f->rule, "rule", f->rule, "start_ns",
							(json_int_t)f->start_ns, "duration_ns",
							(json_int_t)f->duration_ns, "nodes", nodes,
							"from", f->from_traffic ? "traffic" : "rules"));
			continue;
		}
		fj = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:[]}", "name", f->name, "rule",
				       f->rule, "dir", f->egress ? "egress" : "ingress", "port",
				       f->sw ? "switch" : "nic", "start_ns", (json_int_t)f->start_ns,
				       "duration_ns", (json_int_t)f->duration_ns, "rules");

		json_array_append_new(e->faults, fj);
		for (k = 0; k < e->g.n; k++)
			if ((f->nodes & (1u << e->g.node[k])) &&
			    exp_fault_place(e, i, k, e->err, sizeof(e->err))) {
				log_err("fault %s: %s", f->name, e->err);
				return -EIO;
			}
		if (e->obs.event) {
			char msg[160];

			snprintf(msg, sizeof(msg), "fault %s: %s on %d node(s)", f->name, f->rule,
				 (int)json_array_size(json_object_get(fj, "rules")));
			e->obs.event(e->obs.arg, msg);
		}
	}
	for (i = k = 0; i < e->p.nfaults; i++)
		k += e->p.fault[i].event != PEV_NONE;
	if (e->p.nfaults > k && e->o.print && !e->ctl->json)
		log_info("%d fault rule%s added", e->p.nfaults - k, e->p.nfaults - k == 1 ? "" : "s");
	if (k && e->o.print && !e->ctl->json)
		log_info("%d node fault%s on the timeline", k, k == 1 ? "" : "s");
	return 0;
}

int exp_open(struct exp *e, struct ctl *ctl, const struct exp_opts *o)
{
	int r, i;

	e->ctl = ctl;
	e->o = *o;
	e->sw.fd = -1;
	for (i = 0; i < PROF_MAX_SWITCHES; i++)
		e->swh[i].fd = -1;
	memset(e->ids, 0xff, sizeof(e->ids));
	e->wl = wlc_find(e->p.workload);
	if (!e->wl) {
		log_err("workload '%s': no such workload", e->p.workload);
		return CTL_USAGE;
	}
	if ((r = pick_dir(e, o->outdir)))
		return r;
	e->t_start = rtb_now_s();
	iso_now(e->when, sizeof(e->when));
	if (e->p.nhosts ? open_hosts(e) : open_testbed(e))
		return CTL_FAIL;
	e->group_open = 1;
	/* each member's kernel and boot, for the report (per-node VMs, hosts:
	 * each its own) */
	e->node_kernels = json_array();
	for (i = 0; i < e->g.n; i++) {
		json_t *res = NULL;
		char err[256];

		if (agentc_call(&e->g.c[i], "hello", NULL, &res, 10000, err, sizeof(err)))
			continue;
		json_array_append_new(e->node_kernels,
				      json_pack("{s:s,s:s*,s:s*}", "node",
						e->g.tb.node[e->g.node[i]].name, "kernel",
						json_string_value(json_object_get(res, "kernel")),
						"boot_id",
						json_string_value(json_object_get(res, "boot_id"))));
		if (e->p.slurm.on)	/* port: nic is the node's RoCE netdev */
			snprintf(e->p.host[e->g.node[i]].nic, sizeof(e->p.host[0].nic), "%s",
				 json_string_value(json_object_get(res, "netdev")) ?: "");
		snprintf(e->mac[i], sizeof(e->mac[i]), "%s",	/* a switch host's MAC table */
			 json_string_value(json_object_get(res, "mac")) ?: "");
		if (json_string_length(json_object_get(res, "boot_id")) &&
		    json_string_length(json_object_get(res, "bpffs")))
			snprintf(e->inj_key[i], sizeof(e->inj_key[i]), "%s %s",
				 json_string_value(json_object_get(res, "boot_id")),
				 json_string_value(json_object_get(res, "bpffs")));
		json_decref(res);
	}
	if (e->p.nswitches && exp_switches_open(e))
		return CTL_FAIL;
	if (exp_per_node(e) && (r = tb_switch_open(&e->sw, &e->g.tb, 5000))) {
		log_err("%s: %s: the switch ports' faults and traces need it ('rdmactl testbed "
			"status')", e->sw.where, strerror(-r));
		return CTL_FAIL;
	}
	e->faults = json_array();
	for (i = 0; i < PROF_MAX_ARMS; i++)
		e->rounds[i] = json_array();
	{	/* the wall clock at t0: the midpoint of the node's reply */
		struct timespec a, b;

		clock_gettime(CLOCK_REALTIME, &a);
		e->t0 = inject_node_now(&e->g.c[0]);
		clock_gettime(CLOCK_REALTIME, &b);
		e->t0_unix_ns = ((json_int_t)a.tv_sec * 1000000000 + a.tv_nsec +
				 (json_int_t)b.tv_sec * 1000000000 + b.tv_nsec) / 2;
	}
	if (add_faults(e))
		return CTL_FAIL;
	e->g.obs.lost = exp_lost;
	e->g.obs.arg = e;
	if (exp_nodes_start(e, e->err, sizeof(e->err))) {
		log_err("%s", e->err);
		return CTL_FAIL;
	}
	return 0;
}

void exp_close(struct exp *e)
{
	int a;

	exp_nodes_free(e);	/* first: nothing is frozen or cut off after us */
	if (e->group_open)
		group_close(&e->g);
	if (e->sw.fd >= 0)
		agentc_close(&e->sw);
	for (a = 0; a < PROF_MAX_SWITCHES; a++)	/* a forwarder still up stops with it */
		if (e->swh[a].fd >= 0)
			agentc_close(&e->swh[a]);
	ssh_agents_stop(&e->ssh);	/* after our connections: nothing of ours is left in them */
	slurm_agents_stop(&e->slurm);
	if (e->joined)	/* the parked connections too: the agents dial again, for the next */
		join_stop();
	e->joined = 0;
	/* a run that wrote nothing leaves nothing; one whose report could not be
	 * written whole keeps the files that were (rmdir removes only an empty
	 * directory; after the rename there is none by that name) */
	if (e->tmpname[0]) {
		if (exp_partial_is_ours(e, e->tmpname))
			rmdir(e->tmpname);
		close(e->tmpfd);
		e->tmpname[0] = e->tmpdir[0] = '\0';
	}
	for (a = 0; a < PROF_MAX_ARMS; a++)
		json_decref(e->rounds[a]);
	json_decref(e->reach0);
	e->reach0 = NULL;
	exp_trace_stop(e);
	json_decref(e->captures);
	json_decref(e->traces);
	json_decref(e->faults);
	json_decref(e->hits);
	json_decref(e->node_kernels);
	json_decref(e->switches);
	json_decref(e->report);
	if (e->loaded)
		profile_free(&e->p);
}
