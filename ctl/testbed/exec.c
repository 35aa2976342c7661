// SPDX-License-Identifier: MIT
/*
 * rdmactl testbed exec NODE [--env K=V]... -- CMD [ARG...]   (docker exec)
 * rdmactl testbed cp FILE... NODE:PATH                       (docker cp)
 *
 * exec runs CMD where NODE's RDMA device lives: in NODE's VM over its ssh
 * (per-node VMs; a shared kernel's VM holds every node), or on this host
 * (host backend). stdin, stdout and stderr pass through; rdmactl exits with
 * CMD's status (a signal N as 128+N, as a shell says it). The node's facts
 * are in CMD's environment, asked of the agents (hello; an agent that does
 * not answer leaves its node's address and GID index empty):
 *   RDMATB_NODE, RDMATB_DEV, RDMATB_PORT, RDMATB_GID_INDEX, RDMATB_IP,
 *   RDMATB_NODES (how many), RDMATB_PEERS (the other nodes' addresses),
 *   RDMATB_NODEi_DEV, RDMATB_NODEi_IP, RDMATB_NODEi_GID_INDEX for every i.
 * cp copies files to the nodes: the mode kept, but never setuid or setgid;
 * a symbolic link refused; a VM node's filesystem is its RAM, gone with
 * `testbed down`. A PATH ending in '/' is a directory.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/word.h"

#define ENV_MAX (8 + 3 * TB_MAX_NODES + 32)

struct node_facts {
	char ip[64];
	int gid_index;
};

/* a shell word: 'it' with every ' as '\'' */
int tb_sh_quote(char *buf, size_t len, size_t *at, const char *s)
{
	if (*at + 1 >= len)
		return -E2BIG;
	buf[(*at)++] = '\'';
	for (; *s; s++) {
		if (*at + 5 >= len)
			return -E2BIG;
		if (*s == '\'') {
			memcpy(buf + *at, "'\\''", 4);
			*at += 4;
		} else
			buf[(*at)++] = *s;
	}
	if (*at + 2 >= len)
		return -E2BIG;
	buf[(*at)++] = '\'';
	buf[(*at)++] = ' ';
	buf[*at] = '\0';
	return 0;
}

/* K=V with K a shell name */
static int env_ok(const char *kv)
{
	const char *p = kv;

	if (!isalpha((unsigned char)*p) && *p != '_')
		return 0;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	return *p == '=';
}

/* every node's address and GID index, from its agent; an agent that does
 * not answer leaves its node's empty (said once), the command runs anyway */
static void gather(const struct tb_state *s, struct node_facts *f)
{
	char err[256];
	int i, r;

	for (i = 0; i < s->nodes; i++) {
		struct agentc c;
		json_t *res = NULL;
		const char *ip;

		f[i].ip[0] = '\0';
		f[i].gid_index = -1;
		if ((r = tb_agent_open(&c, s, i, 3000))) {
			log_info("note: %s: %s: its address and GID index are left empty", c.where,
				 strerror(-r));
			continue;
		}
		r = agentc_call(&c, "hello", NULL, &res, 5000, err, sizeof(err));
		agentc_close(&c);
		if (r) {
			log_info("note: %s: its address and GID index are left empty", err);
			continue;
		}
		ip = json_string_value(json_object_get(res, "ip"));
		if (ip && !word_ip_ok(ip))	/* the agent's word: only an address passes */
			log_info("note: %s: its agent's address is not an IP address: left empty",
				 c.where);
		else
			snprintf(f[i].ip, sizeof(f[i].ip), "%s", ip ? ip : "");
		if (json_is_integer(json_object_get(res, "gid_index")))
			f[i].gid_index = (int)json_integer_value(json_object_get(res, "gid_index"));
		json_decref(res);
	}
}

/* NAME=index, or NAME= when it is not known */
static void gid(char *buf, const char *name, int index)
{
	if (index < 0)
		snprintf(buf, 160, "%s=", name);
	else
		snprintf(buf, 160, "%s=%d", name, index);
}

/* the environment: the node's facts, then the user's --env */
static int build_env(const struct tb_state *s, const struct node_facts *f, int me, char **user,
		     int nuser, char env[][160], int *n)
{
	char peers[TB_MAX_NODES * 20] = "", name[32];
	int i, k = 0;

	for (i = 0; i < s->nodes; i++)
		if (i != me && f[i].ip[0])
			snprintf(peers + strlen(peers), sizeof(peers) - strlen(peers), "%s%s",
				 *peers ? " " : "", f[i].ip);
	snprintf(env[k++], 160, "RDMATB_NODE=%s", s->node[me].name);
	snprintf(env[k++], 160, "RDMATB_DEV=%s", s->node[me].dev);
	snprintf(env[k++], 160, "RDMATB_PORT=1");
	gid(env[k++], "RDMATB_GID_INDEX", f[me].gid_index);
	snprintf(env[k++], 160, "RDMATB_IP=%s", f[me].ip);
	snprintf(env[k++], 160, "RDMATB_NODES=%d", s->nodes);
	snprintf(env[k++], 160, "RDMATB_PEERS=%s", peers);
	for (i = 0; i < s->nodes; i++) {
		snprintf(env[k++], 160, "RDMATB_NODE%d_DEV=%s", i, s->node[i].dev);
		snprintf(env[k++], 160, "RDMATB_NODE%d_IP=%s", i, f[i].ip);
		snprintf(name, sizeof(name), "RDMATB_NODE%d_GID_INDEX", i);
		gid(env[k++], name, f[i].gid_index);
	}
	for (i = 0; i < nuser; i++) {
		if (strlen(user[i]) >= 160) {
			log_err("testbed exec: --env %.20s...: longer than 159 characters", user[i]);
			return -E2BIG;
		}
		snprintf(env[k++], 160, "%s", user[i]);
	}
	*n = k;
	return 0;
}

int tb_ssh_config(char *buf, size_t len)
{
	tb_state_path(buf, len, "ssh/config");
	if (access(buf, R_OK)) {
		log_err("%s: no ssh into the testbed VM (was ssh-keygen there at 'testbed up'? make deps)",
			buf);
		return -ENOENT;
	}
	return 0;
}

/* run argv in the foreground; its status as a shell gives it */
static int run_fg(char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	pid_t pid;
	int r, st;

	/* Ctrl-C is the command's to handle (it is in our process group) */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	r = proc_spawn(argv, NULL, &pid);
	if (!r)
		r = proc_reap(pid, -1, &st);
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (r) {
		log_err("testbed exec: %s: %s", argv[0], strerror(-r));
		return 127;
	}
	return st;
}

static void exec_usage(FILE *f)
{
	fprintf(f, "usage: rdmactl testbed exec NODE [--env K=V]... [--] CMD [ARG...]\n"
		   "  runs CMD where NODE's RDMA device is (the testbed VM, or this host),\n"
		   "  stdin/stdout/stderr passed through, exiting with CMD's status;\n"
		   "  CMD's environment: RDMATB_NODE RDMATB_DEV RDMATB_PORT RDMATB_GID_INDEX\n"
		   "  RDMATB_IP RDMATB_NODES RDMATB_PEERS RDMATB_NODEi_{DEV,IP,GID_INDEX}\n");
}

int tb_cmd_exec(void *ctl, int argc, char **argv)
{
	static struct tb_state s;
	struct node_facts f[TB_MAX_NODES];
	char env[ENV_MAX][160], *user[32], cfg[PATH_MAX];
	int nuser = 0, nenv, me, i, a = 1, r;

	(void)ctl;

	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		exec_usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? CTL_USAGE : 0;
	}
	for (; a < argc; a++) {
		if (!strcmp(argv[a], "--")) {
			a++;
			break;
		}
		if (strcmp(argv[a], "--env"))
			break;
		if (a + 1 >= argc || !env_ok(argv[a + 1])) {
			log_err("testbed exec: --env wants NAME=VALUE (NAME: letters, digits, _), got '%s'",
				a + 1 < argc ? argv[a + 1] : "");
			return CTL_USAGE;
		}
		if (nuser == (int)(sizeof(user) / sizeof(*user))) {
			log_err("testbed exec: more than %zu --env", sizeof(user) / sizeof(*user));
			return CTL_USAGE;
		}
		user[nuser++] = argv[++a];
	}
	if (a >= argc) {
		log_err("testbed exec: no command to run");
		exec_usage(stderr);
		return CTL_USAGE;
	}
	r = tb_load_rdma(&s);
	if (r == -ENOENT)
		log_err("testbed exec: no testbed is up (rdmactl testbed up)");
	if (r)
		return CTL_FAIL;
	if ((me = tb_node_index(&s, argv[0])) < 0) {
		log_err("testbed exec: no node '%s' (node0..node%d)", argv[0], s.nodes - 1);
		return CTL_USAGE;
	}
	if (!tb_ops(s.backend)->alive(&s)) {
		log_err("testbed exec: the testbed is not running (rdmactl testbed status)");
		return CTL_FAIL;
	}
	gather(&s, f);
	if (build_env(&s, f, me, user, nuser, env, &nenv))
		return CTL_FAIL;
	if (s.backend == TB_VM) {
		/* ssh joins its arguments into one remote command line: every
		 * word quoted; not exec'd, so that a signal comes back as 128+N */
		static char line[65536];
		char *sargv[16], host[32];
		size_t at = 0;
		int n = 0;

		if (tb_ssh_config(cfg, sizeof(cfg)))
			return CTL_FAIL;
		snprintf(line, sizeof(line), "cd /root && env ");
		at = strlen(line);
		for (i = 0; i < nenv; i++)
			if (tb_sh_quote(line, sizeof(line), &at, env[i]))
				goto big;
		if ((size_t)snprintf(line + at, sizeof(line) - at, "sh -c '\"$@\"; exit $?' sh ") >=
		    sizeof(line) - at)
			goto big;
		at += strlen(line + at);
		for (i = a; i < argc; i++)
			if (tb_sh_quote(line, sizeof(line), &at, argv[i]))
				goto big;
		sargv[n++] = "ssh";
		sargv[n++] = "-F";
		sargv[n++] = cfg;
		sargv[n++] = "-q";
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			sargv[n++] = "-t";	/* an interactive command gets a terminal */
		sargv[n++] = (char *)tb_ssh_host(me, host, sizeof(host));
		sargv[n++] = "--";
		sargv[n++] = line;
		sargv[n] = NULL;
		r = run_fg(sargv);
		if (r == 255)
			log_info("testbed exec: ssh exited 255 (the command's own status, or ssh "
				 "could not reach the VM: rdmactl testbed status)");
		return r;
	big:
		log_err("testbed exec: the command line is longer than %zu bytes", sizeof(line));
		return CTL_USAGE;
	}
	/* host backend: the nodes are this kernel's devices, CMD runs here */
	for (i = 0; i < nenv; i++)
		putenv(env[i]);
	return run_fg(argv + a);
}

/* copy one local file (open at fd) to node's VM at dst (a full path), mode kept */
static int cp_vm(const char *cfg, int node, int fd, const char *dst, mode_t mode)
{
	static char line[8192];
	char m[16], host[32];
	char *sargv[] = { "ssh", "-F", (char *)cfg, "-q", (char *)tb_ssh_host(node, host, sizeof(host)),
			  "--", line, NULL };
	struct proc_io io = { .in = -1, .out = -1, .err = -1 };
	size_t at = 0;
	pid_t pid;
	int r, st;

	snprintf(m, sizeof(m), "%o", (unsigned)(mode & 0777));
	snprintf(line, sizeof(line), "set -e; d=");
	at = strlen(line);
	if (tb_sh_quote(line, sizeof(line), &at, dst))
		return -E2BIG;
	at--;	/* the space sh_quote left */
	snprintf(line + at, sizeof(line) - at,
		 "; mkdir -p \"$(dirname \"$d\")\"; cat > \"$d.rtbcp\"; chmod %s \"$d.rtbcp\"; "
		 "mv -f \"$d.rtbcp\" \"$d\"", m);
	io.in = fd;
	r = proc_spawn(sargv, &io, &pid);
	if (!r)
		r = proc_reap(pid, 300000, &st);
	if (r == -ETIMEDOUT)
		proc_stop(pid, 1000);
	return r ? r : st ? -EIO : 0;
}

/* the same on this host (host backend): a fresh file, then renamed over */
static int cp_host(int fd, const char *dst, mode_t mode)
{
	char tmp[PATH_MAX];
	int r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.rtbcp", dst) >= sizeof(tmp))
		return -ENAMETOOLONG;
	r = ctl_copy_fd(fd, tmp, O_EXCL | O_NOFOLLOW, mode & 0777);
	if (!r && rename(tmp, dst))
		r = -errno;
	if (r && r != -EEXIST)	/* ours to remove; an existing one is not */
		unlink(tmp);
	return r;
}

int tb_cmd_cp(void *ctl, int argc, char **argv)
{
	static struct tb_state s;
	char cfg[PATH_MAX], node[32], dst[PATH_MAX];
	const char *colon, *path;
	int i, r, dir, me;

	(void)ctl;
	if (argc < 2) {
		fprintf(stderr, "usage: rdmactl testbed cp FILE... NODE:PATH   (PATH/ : into directory PATH)\n");
		return CTL_USAGE;
	}
	colon = strchr(argv[argc - 1], ':');
	if (!colon || colon == argv[argc - 1] || (size_t)(colon - argv[argc - 1]) >= sizeof(node) ||
	    colon[1] != '/') {
		log_err("testbed cp: the last argument must be NODE:/absolute/path, got '%s'",
			argv[argc - 1]);
		return CTL_USAGE;
	}
	snprintf(node, sizeof(node), "%.*s", (int)(colon - argv[argc - 1]), argv[argc - 1]);
	path = colon + 1;
	dir = path[strlen(path) - 1] == '/' || argc > 2;
	r = tb_load_rdma(&s);
	if (r == -ENOENT)
		log_err("testbed cp: no testbed is up (rdmactl testbed up)");
	if (r)
		return CTL_FAIL;
	if ((me = tb_node_index(&s, node)) < 0) {
		log_err("testbed cp: no node '%s' (node0..node%d)", node, s.nodes - 1);
		return CTL_USAGE;
	}
	if (s.backend == TB_VM && tb_ssh_config(cfg, sizeof(cfg)))
		return CTL_FAIL;
	for (i = 0; i < argc - 1; i++) {
		struct stat st;
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];

		int fd;

		/* one open file from here on: checked, read and its mode taken by
		 * its descriptor, never by the name again (a name can be swapped);
		 * no link followed; the copy never setuid or setgid (root writes it) */
		fd = open(argv[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			log_err("testbed cp: %s: %s", argv[i], errno == ELOOP ?
				"a symbolic link (give the file it names)" : strerror(errno));
			if (fd >= 0)
				close(fd);
			return CTL_FAIL;
		}
		if (!S_ISREG(st.st_mode)) {
			log_err("testbed cp: %s: not a regular file", argv[i]);
			close(fd);
			return CTL_FAIL;
		}
		fcntl(fd, F_SETFL, 0);	/* O_NONBLOCK was for the open (a FIFO never opens) */
		if (st.st_mode & (S_ISUID | S_ISGID))
			log_info("testbed cp: %s: copied without its setuid/setgid bits", argv[i]);
		if ((size_t)snprintf(dst, sizeof(dst), "%s%s%s", path,
				     dir && path[strlen(path) - 1] != '/' ? "/" : "",
				     dir ? base : "") >= sizeof(dst)) {
			log_err("testbed cp: %s: path too long", path);
			close(fd);
			return CTL_USAGE;
		}
		r = s.backend == TB_VM ? cp_vm(cfg, me, fd, dst, st.st_mode & 0777) :
					 cp_host(fd, dst, st.st_mode & 0777);
		close(fd);
		if (r) {
			log_err("testbed cp: %s -> %s:%s: %s", argv[i], node, dst, strerror(-r));
			return CTL_FAIL;
		}
	}
	return 0;
}
