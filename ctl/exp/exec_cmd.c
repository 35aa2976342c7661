// SPDX-License-Identifier: MIT
/*
 * One command of an exec round (exec_int.h): started on its node through
 * rdma-run (its environment on stdin, never on a command line), its
 * stdout and stderr pumped into the run directory (each capped), watched
 * for readiness, ended, and its outcome read back with `rdma-run stop`.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl/exp/exec_int.h"
#include "lib/clock.h"
#include "lib/hwc.h"
#include "lib/log.h"
#include "lib/proc.h"

static int node_argv(struct run *r, int m, const char *const *words, char **argv, char *line,
		     size_t len)
{
	return exp_node_argv(r->e, r->cfg, m, words, argv, line, len);
}

static const char *runner(const struct run *r)
{
	return exp_node_tool(r->e, "rdma-run");
}

/* rdma-run stop ID on the instance's node: its answer kept */
void exec_stop_inst(struct run *r, struct inst *in)
{
	static char line[4096];
	char grace[16], out[1024], *argv[32];
	const char *words[] = { runner(r), "stop", in->id, grace, NULL };
	json_t *j;
	int rc;

	snprintf(grace, sizeof(grace), "%d", STOP_GRACE_MS);
	if (node_argv(r, in->member, words, argv, line, sizeof(line)))
		return;
	rc = proc_run(argv, out, sizeof(out));
	j = rc ? NULL : json_loads(out, 0, NULL);
	if (!j) {
		snprintf(in->note, sizeof(in->note), "rdma-run stop: %s",
			 rc < 0 ? strerror(-rc) : rc ? "failed (could not reach the node?)" :
						 "no status in its answer");
		return;
	}
	if (!in->status || strcmp(jr_str(j, "state"), "unknown")) {
		json_decref(in->status);
		in->status = j;
	} else {
		json_decref(j);
	}
}

static void inst_event(struct run *r, const struct inst *in, const char *what)
{
	exp_event(r->e, "%s: %s on %s: %s", r->p->arm[r->a].name, r->p->role[in->role].name,
		  r->node[in->member].name, what);
}

/* NAME=VALUE with VALUE's placeholders expanded, into buf */
static int env_word(struct run *r, const struct tpl_ctx *c, const char *k, const char *v,
		    char *buf, size_t len)
{
	char msg[256];
	size_t off, n = (size_t)snprintf(buf, len, "%s=", k);

	if (n >= len || tpl_expand(v, c, buf + n, len - n, &off, msg, sizeof(msg))) {
		snprintf(r->err, r->errlen, "env %s: %s", k, n >= len ? "too long" : msg);
		return -EINVAL;
	}
	return 0;
}

/* the facts of every node, then the workload's, the role's, the arm's
 * environment (later ones win), as -e words */
static int env_words(struct run *r, struct inst *in, const struct tpl_ctx *c,
		     char env[][ENV_WORD], int *n)
{
	static const char *const facts[] = { "DEV", "IP", "GID_INDEX", "PORT", "NAME" };
	const json_t *maps[] = { json_object_get(r->p->wopts, "env"), r->p->role[in->role].env,
				 json_object_get(r->p->arm[r->a].opts, "env") };
	const char *k, *tmpl[] = { "{self.dev}", "{self.ip}", "{self.gid_index}", "{self.port}",
				  "{self.name}" };
	char name[64], peers[TB_MAX_NODES * 20] = "", v[32];
	json_t *val;
	int i, j;

	*n = 0;
	for (i = 0; i < 5; i++) {	/* the names `testbed exec` gives them */
		snprintf(name, sizeof(name), "RDMATB_%s", i == 4 ? "NODE" : facts[i]);
		if (env_word(r, c, name, tmpl[i], env[(*n)++], ENV_WORD))
			return -EINVAL;
	}
	for (i = 0; i < r->e->g.n; i++) {
		if (i != in->member && r->node[i].ip[0])
			snprintf(peers + strlen(peers), sizeof(peers) - strlen(peers), "%s%s",
				 *peers ? " " : "", r->node[i].ip);
		for (j = 0; j < 3; j++) {
			snprintf(name, sizeof(name), "RDMATB_NODE%d_%s", i, facts[j]);
			snprintf(v, sizeof(v), "{node%d.%s}", i, j == 0 ? "dev" : j == 1 ? "ip" :
				 "gid_index");
			if (env_word(r, c, name, v, env[(*n)++], ENV_WORD))
				return -EINVAL;
		}
	}
	snprintf(env[(*n)++], ENV_WORD, "RDMATB_PEERS=%s", peers);
	snprintf(env[(*n)++], ENV_WORD, "RDMATB_NODES=%d", r->e->g.n);
	for (i = 0; i < 3; i++)
		json_object_foreach((json_t *)maps[i], k, val)
			if (*n == EXECENV_MAX) {	/* the checker refuses such a profile */
				snprintf(r->err, r->errlen, "env: more than %d variables",
					 EXECENV_MAX);
				return -E2BIG;
			} else if (env_word(r, c, k, json_string_value(val), env[(*n)++], ENV_WORD)) {
				return -EINVAL;
			}
	return 0;
}

static int open_out(struct run *r, struct inst *in, int s)
{
	char path[PATH_MAX * 2];

	snprintf(in->rel[s], sizeof(in->rel[s]), "exec/%s/r%llu/%s.%s.%s", r->p->arm[r->a].name,
		 (unsigned long long)r->round + 1, r->p->role[in->role].name,
		 r->node[in->member].name, s ? "stderr" : "stdout");
	if (!r->dir[0]) {
		in->rel[s][0] = 0;
		in->file[s] = open("/dev/null", O_WRONLY | O_CLOEXEC);
	} else {
		snprintf(path, sizeof(path), "%s/%s", r->e->tmpdir, in->rel[s]);
		in->file[s] = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	return in->file[s] < 0 ? -errno : 0;
}

/* argv spawned with its stdout and stderr piped to in->fd, the environment
 * written to its stdin (rdma-run -E reads it all before it starts the
 * command): 0, or -errno with in->note */
static int spawn_inst(struct run *r, struct inst *in, char **argv, char env[][ENV_WORD], int nenv)
{
	int pin[2][2] = { { -1, -1 }, { -1, -1 } }, penv[2] = { -1, -1 }, i, rc;
	struct proc_io io;

	if (open_out(r, in, 0) || open_out(r, in, 1) || pipe2(pin[0], O_CLOEXEC) ||
	    pipe2(pin[1], O_CLOEXEC) || pipe2(penv, O_CLOEXEC)) {
		rc = -errno;
		snprintf(in->note, sizeof(in->note), "its output files: %s", strerror(-rc));
		for (i = 0; i < 2; i++) {
			if (pin[0][i] >= 0)
				close(pin[0][i]);
			if (pin[1][i] >= 0)
				close(pin[1][i]);
			if (penv[i] >= 0)
				close(penv[i]);
		}
		return rc;
	}
	io = (struct proc_io){ penv[0], pin[0][1], pin[1][1], 1 };
	rc = proc_spawn(argv, &io, &in->pid);
	close(penv[0]);
	close(pin[0][1]);
	close(pin[1][1]);
	for (i = 0; !rc && i < nenv; i++)
		if (write(penv[1], env[i], strlen(env[i]) + 1) != (ssize_t)strlen(env[i]) + 1)
			break;
	close(penv[1]);
	if (rc) {
		close(pin[0][0]);
		close(pin[1][0]);
		snprintf(in->note, sizeof(in->note), "%s: %s", argv[0], strerror(-rc));
		return rc;
	}
	in->fd[0] = pin[0][0];
	in->fd[1] = pin[1][0];
	fcntl(in->fd[0], F_SETFL, O_NONBLOCK);
	fcntl(in->fd[1], F_SETFL, O_NONBLOCK);
	return 0;
}

/* ready.port: rdma-run wait-port on the node, its exit the readiness */
static void start_waiter(struct run *r, struct inst *in, const struct prof_role *ro)
{
	char port[16], ms[24], *argv[64];
	const char *w[] = { runner(r), "wait-port", port, ms, NULL };
	static char wline[4096];
	struct proc_io io = { open("/dev/null", O_RDONLY | O_CLOEXEC), -1, -1, 1 };

	snprintf(port, sizeof(port), "%d", ro->ready_port);
	snprintf(ms, sizeof(ms), "%llu", (unsigned long long)(ro->ready_timeout_ns / 1000000));
	io.out = io.err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (node_argv(r, in->member, w, argv, wline, sizeof(wline)) ||
	    proc_spawn(argv, &io, &in->waiter))
		in->waiter = 0;
	close(io.in);
	close(io.out);
}

/* start one command: 0, or -EIO (the instance is done, "not started") */
int exec_start_inst(struct run *r, struct inst *in)
{
	/* one ssh argument: the kernel takes at most 128 KiB (MAX_ARG_STRLEN) */
	static char line[131072], cmd[PROF_CMD_MAX * 4], env[EXECENV_MAX][ENV_WORD];
	const struct prof_role *ro = &r->p->role[in->role];
	const char *roles[PROF_MAX_ROLES + 1], *words[16];
	int role_node[PROF_MAX_ROLES], nenv, i, k = 0;
	struct tpl_ctx c = { .node = r->node, .nnodes = r->e->g.n, .self = in->member,
			     .round = (int)r->round + 1 };
	json_t *vars = tpl_arm_ctx(r->p, r->a, roles, role_node, &c);
	char msg[256], *argv[64], tmo[24];
	size_t off;

	snprintf(tmo, sizeof(tmo), "%llu", (unsigned long long)(ro->timeout_ns / 1000000));

	in->state = S_DONE;
	in->fd[0] = in->fd[1] = in->file[0] = in->file[1] = -1;
	if (tpl_expand(ro->cmd, &c, cmd, sizeof(cmd), &off, msg, sizeof(msg))) {
		snprintf(in->note, sizeof(in->note), "cmd: %s", msg);
		goto fail;
	}
	if (env_words(r, in, &c, env, &nenv)) {
		snprintf(in->note, sizeof(in->note), "%s", r->err);
		goto fail;
	}
	words[k++] = runner(r);
	words[k++] = "start";
	words[k++] = in->id;
	words[k++] = "-t";	/* timed on the node, from the command's start */
	words[k++] = tmo;
	words[k++] = "-E";	/* the environment on stdin: never on a command line */
	words[k++] = "--";
	words[k++] = cmd;
	words[k] = NULL;
	if (node_argv(r, in->member, words, argv, line, sizeof(line))) {
		snprintf(in->note, sizeof(in->note), "the command line is longer than %zu bytes",
			 sizeof(line));
		goto fail;
	}
	if (spawn_inst(r, in, argv, env, nenv))
		goto fail;
	in->state = S_RUNNING;
	in->t0 = rtb_now_s();
	/* rdma-run ends it at its timeout; this is for a node that stopped
	 * answering (a command whose ssh hangs) */
	in->deadline = in->t0 + (double)ro->timeout_ns / 1e9 + BACKSTOP_S;
	in->ready = ro->ready == PR_NONE;
	if (ro->ready == PR_PORT)
		start_waiter(r, in, ro);
	json_decref(vars);
	inst_event(r, in, "started");
	return 0;
fail:
	json_decref(vars);
	for (i = 0; i < 2; i++)
		if (in->file[i] >= 0) {
			close(in->file[i]);
			in->file[i] = -1;
		}
	in->why = WHY_ABORTED;
	inst_event(r, in, in->note);
	return -EIO;
}

/* a complete line of stream s: does it make the command ready? */
static void scan_line(struct run *r, struct inst *in, const char *s)
{
	const struct prof_role *ro = &r->p->role[in->role];

	if (!in->ready && ro->ready == PR_LINE && !regexec(&r->re[in->role], s, 0, NULL, 0))
		in->ready = 1;
}

static void take(struct run *r, struct inst *in, int s, const char *buf, size_t n)
{
	size_t keep = in->bytes[s] >= OUT_CAP ? 0 : n < OUT_CAP - in->bytes[s] ? n :
		      (size_t)(OUT_CAP - in->bytes[s]);

	if (keep && write(in->file[s], buf, keep) != (ssize_t)keep)
		keep = 0;
	in->bytes[s] += keep;
	in->dropped[s] += n - keep;
	if (r->p->role[in->role].ready != PR_LINE || in->ready)
		return;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n' || in->ll[s] == sizeof(in->line[s]) - 1) {
			in->line[s][in->ll[s]] = 0;
			scan_line(r, in, in->line[s]);
			in->ll[s] = 0;
			if (buf[i] == '\n')
				continue;
		}
		in->line[s][in->ll[s]++] = buf[i];
	}
}

/* wait up to ms for output, take it; reap what exited */
void exec_pump(struct run *r, int ms)
{
	struct pollfd pf[MAX_INST * 2];
	struct inst *who[MAX_INST * 2];
	int sw[MAX_INST * 2], n = 0, i, s, st;
	char buf[65536];

	for (i = 0; i < r->n; i++)
		for (s = 0; s < 2; s++)
			if (r->in[i].fd[s] >= 0) {
				pf[n] = (struct pollfd){ .fd = r->in[i].fd[s], .events = POLLIN };
				who[n] = &r->in[i];
				sw[n++] = s;
			}
	if (n)
		poll(pf, (nfds_t)n, ms);
	else
		usleep((useconds_t)ms * 1000);
	for (i = 0; i < n; i++) {
		struct inst *in = who[i];
		ssize_t k;

		if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		while ((k = read(in->fd[sw[i]], buf, sizeof(buf))) > 0)
			take(r, in, sw[i], buf, (size_t)k);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
			if (in->ll[sw[i]]) {	/* a last line without its newline */
				in->line[sw[i]][in->ll[sw[i]]] = 0;
				scan_line(r, in, in->line[sw[i]]);
			}
			close(in->fd[sw[i]]);
			in->fd[sw[i]] = -1;
		}
	}
	for (i = 0; i < r->n; i++) {
		struct inst *in = &r->in[i];

		if (in->waiter > 0 && waitpid(in->waiter, &st, WNOHANG) == in->waiter) {
			in->waiter = 0;
			if (proc_status(st) == 0)
				in->ready = 1;
			else if (!in->ready)
				snprintf(in->note, sizeof(in->note), "port %d: not listening after %.3g s",
					 r->p->role[in->role].ready_port,
					 (double)r->p->role[in->role].ready_timeout_ns / 1e9);
		}
		if (in->state == S_RUNNING && in->fd[0] < 0 && in->fd[1] < 0 &&
		    waitpid(in->pid, &st, WNOHANG) == in->pid) {
			in->pid = 0;
			in->t1 = rtb_now_s();
			in->state = S_DONE;
		}
	}
}

/* end a running command now (why: WHY_*), its status kept */
void exec_end_inst(struct run *r, struct inst *in, int why, const char *what)
{
	if (in->state != S_RUNNING)
		return;
	in->why = why;
	inst_event(r, in, what);
	exec_stop_inst(r, in);
	/* its ssh (or rdma-run) ends with it; a hung one is stopped here */
	for (int i = 0; i < 100 && in->state == S_RUNNING; i++)
		exec_pump(r, 50);
	if (in->state == S_RUNNING) {
		proc_stop(in->pid, 1000);
		in->pid = 0;
		in->t1 = rtb_now_s();
		in->state = S_DONE;
		for (int s = 0; s < 2; s++)
			if (in->fd[s] >= 0) {
				close(in->fd[s]);
				in->fd[s] = -1;
			}
	}
}

/* timeouts of every running command; 1 when interrupted */
int exec_watch(struct run *r)
{
	double now = rtb_now_s();
	int i;

	for (i = 0; i < r->n; i++)
		if (r->in[i].state == S_RUNNING && now >= r->in[i].deadline)
			exec_end_inst(r, &r->in[i], WHY_TIMEOUT, "ended at its timeout");
	return ctl_interrupted;
}

/* what happened to one command, for the report */
json_t *exec_outcome(struct run *r, const struct inst *in)
{
	const json_t *st = in->status;
	const char *state = jr_str(st, "state");
	int code, known = !strcmp(state, "exited") || !strcmp(state, "signaled") ||
			  !strcmp(state, "timeout");
	const char *status;
	json_t *o;

	if (in->why == WHY_ABORTED) {
		status = "not started";
		code = 125;
	} else if (in->why == WHY_TIMEOUT) {
		status = "timeout";
		code = 124;
	} else if (in->why == WHY_SERVICE && known && jr_u64(st, "stopped")) {
		status = "stopped";	/* still serving when the others were done */
		code = 0;
	} else if (in->why == WHY_NOT_READY) {
		status = "not ready";
		code = 124;
	} else if (in->why == WHY_BROKEN) {
		status = "stopped";	/* the run could not go on: another role was not ready */
		code = 125;
	} else if (in->why == WHY_INTERRUPTED) {
		status = "interrupted";
		code = 130;
	} else if (known) {
		status = state;
		code = (int)json_integer_value(json_object_get(st, "exit"));
	} else {
		status = "lost";
		code = 255;
	}
	o = json_pack("{s:s,s:s,s:I,s:s,s:i,s:I,s:I,s:I,s:I,s:b,s:I,s:I,s:I,s:I}", "role",
		      r->p->role[in->role].name, "node", r->node[in->member].name, "round",
		      (json_int_t)r->round + 1, "status", status, "exit", code, "signal",
		      (json_int_t)jr_u64(st, "signal"), "wall_ns",
		      (json_int_t)(known ? jr_u64(st, "wall_ns") :
					   (uint64_t)((in->t1 > in->t0 ? in->t1 - in->t0 : 0) * 1e9)),
		      "leftover", (json_int_t)jr_u64(st, "leftover"), "killed",
		      (json_int_t)(jr_u64(st, "killed") + jr_u64(st, "stopped")),
		      "cgroup", json_is_true(json_object_get(st, "cgroup")), "stdout_bytes",
		      (json_int_t)in->bytes[0], "stderr_bytes", (json_int_t)in->bytes[1],
		      "stdout_dropped", (json_int_t)in->dropped[0], "stderr_dropped",
		      (json_int_t)in->dropped[1]);
	if (in->rel[0][0] && in->why != WHY_ABORTED) {
		json_object_set_new(o, "stdout", json_string(in->rel[0]));
		json_object_set_new(o, "stderr", json_string(in->rel[1]));
	}
	if (in->note[0])
		json_object_set_new(o, "note", json_string(in->note));
	return o;
}

void exec_summary(struct run *r, const struct inst *in, const json_t *o)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s, exit %d, %.3f s%s", jr_str(o, "status"),
		 (int)json_integer_value(json_object_get(o, "exit")), jr_real(o, "wall_ns") / 1e9,
		 jr_u64(o, "leftover") ? " (left processes behind: killed)" : "");
	inst_event(r, in, msg);
}
