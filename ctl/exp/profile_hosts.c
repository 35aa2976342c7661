// SPDX-License-Identifier: MIT
/*
 * A profile's hosts: (profiles/README.md): agents already running,
 * addressed by HOST:PORT with a shared token file, or started by rdmactl
 * over ssh. Strings that reach an ssh command line are checked word by
 * word.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "ctl/exp/check.h"
#include "lib/word.h"

/* hosts: agents already running (started by Slurm, systemd, by hand) */
/* a string that goes into an ssh command line or the remote shell: no
 * leading '-' (it would be an option), nothing the shell would expand */
static int safe_word(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		     const char *s)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@/:";

	if (s[0] == '-' || strspn(s, ok) != strlen(s))
		return prof_perr(x, ytree_get(m, key, NULL), 0,
			    "%s.%s: '%s': letters, digits and _ - . @ / : only, not starting with -",
			    where, key, s);
	return 0;
}

/* the ssh -o keys a profile may set: none that runs a command
 * (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec, ...) */
static int ssh_option_ok(const char *kv)
{
	static const char *const keys[] = {
		"AddressFamily", "BatchMode", "ConnectTimeout", "ConnectionAttempts",
		"Compression", "HostKeyAlias", "IdentitiesOnly", "IdentityFile", "IPQoS",
		"LogLevel", "Port", "ServerAliveCountMax", "ServerAliveInterval",
		"StrictHostKeyChecking", "TCPKeepAlive", "User", "UserKnownHostsFile", NULL
	};
	size_t n = strcspn(kv, "=");

	for (int i = 0; keys[i]; i++)
		if (strlen(keys[i]) == n && !strncasecmp(keys[i], kv, n))
			return 1;
	return 0;
}

/*
 * hosts.ssh.config: an ssh config a profile names is read by ssh as root, so
 * it may hold only keywords that run nothing and read no other file of its
 * own choosing (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec,
 * Include, PKCS11Provider, XAuthLocation, ... are out). ssh then reads the
 * text as checked, from a sealed memfd, not the file again.
 */
static int ssh_config_keyword_ok(const char *k, size_t n)
{
	static const char *const keys[] = {
		"Host", "Match", "HostName", "AddressFamily", "BatchMode", "CheckHostIP",
		"ConnectTimeout", "ConnectionAttempts", "Compression", "GlobalKnownHostsFile",
		"GSSAPIAuthentication", "HashKnownHosts", "HostKeyAlias", "IdentitiesOnly", "IdentityFile", "IPQoS",
		"KbdInteractiveAuthentication", "LogLevel", "PasswordAuthentication", "Port",
		"PreferredAuthentications", "PubkeyAuthentication", "ServerAliveCountMax",
		"SendEnv", "ServerAliveInterval", "StrictHostKeyChecking", "TCPKeepAlive", "UpdateHostKeys",
		"User", "UserKnownHostsFile", NULL
	};

	for (int i = 0; keys[i]; i++)
		if (strlen(keys[i]) == n && !strncasecmp(keys[i], k, n))
			return 1;
	return 0;
}

/* one line of the config: 0, or its bad keyword's length (at *bad) */
static size_t ssh_config_line_bad(const char *l, const char **bad)
{
	size_t n;

	l += strspn(l, " \t");
	if (!*l || *l == '#')
		return 0;
	n = strcspn(l, " \t=");
	*bad = l;
	if (!ssh_config_keyword_ok(l, n))
		return n;
	if (n == 5 && !strncasecmp(l, "Match", 5)) {	/* no criterion that runs a command */
		for (const char *w = l + 5; *w;) {
			size_t k;

			w += strspn(w, " \t=\"");
			k = strcspn(w, " \t=\"");
			if (k >= 4 && !strncasecmp(w, "exec", 4)) {
				*bad = w;
				return k;
			}
			w += k;
		}
	}
	return 0;
}

static int ssh_config_check(struct pctx *x, struct profile *p, const struct ynode *m)
{
	const struct ynode *at = ytree_get(m, "config", NULL);
	char *text = NULL, *l, *save = NULL;
	struct stat st;
	int fd, line = 0, r = -EINVAL;
	ssize_t got;

	fd = open(p->ssh.config, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)	/* not there yet (the testbed's): a run refuses it */
		return 0;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > 65536) {
		prof_perr(x, at, 0, "hosts.ssh.config: %s: %s", p->ssh.config,
			  fd < 0 ? strerror(errno) : "not a regular file of at most 64 KiB");
		goto out;
	}
	text = calloc(1, (size_t)st.st_size + 1);
	got = text ? read(fd, text, (size_t)st.st_size) : -1;
	if (got != st.st_size) {
		prof_perr(x, at, 0, "hosts.ssh.config: %s: cannot read it", p->ssh.config);
		goto out;
	}
	close(fd);
	fd = memfd_create("rdmactl-ssh-config", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (fd < 0 || write(fd, text, (size_t)got) != got ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) {
		prof_perr(x, at, 0, "hosts.ssh.config: a private copy: %s", strerror(errno));
		goto out;
	}
	for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		const char *bad = NULL;
		size_t n;

		line++;
		if ((n = ssh_config_line_bad(l, &bad))) {
			prof_perr(x, at, 0, "hosts.ssh.config: %s:%d: '%.*s' is not allowed in a "
				  "profile's ssh config (it can run a command or read other files as "
				  "root; allowed: Host, Match without exec, HostName, User, Port, "
				  "IdentityFile, UserKnownHostsFile, StrictHostKeyChecking, ...)",
				  p->ssh.config, line, (int)n, bad);
			goto out;
		}
	}
	/* ssh closes every inherited descriptor first: it opens ours by /proc */
	snprintf(p->ssh.config_arg, sizeof(p->ssh.config_arg), "/proc/%d/fd/%d", (int)getpid(), fd);
	p->ssh.config_fd = fd;
	fd = -1;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return r;
}

/* hosts.ssh: {config, agent, options} */
static int check_ssh(struct pctx *x, struct profile *p, const struct ynode *m)
{
	static const char *const keys[] = { "config", "agent", "options", NULL };
	const struct ynode *o;
	size_t i;

	if (prof_want(x, m, YN_MAP, "hosts.ssh") || prof_keys_known(x, m, keys, "hosts.ssh") ||
	    prof_get_str(x, m, "config", "hosts.ssh", p->ssh.config, sizeof(p->ssh.config)) ||
	    prof_get_str(x, m, "agent", "hosts.ssh", p->ssh.agent, sizeof(p->ssh.agent)) ||
	    safe_word(x, m, "agent", "hosts.ssh", p->ssh.agent) ||
	    (p->ssh.config[0] && ssh_config_check(x, p, m)))
		return -EINVAL;
	o = ytree_get(m, "options", NULL);
	if (o) {
		if (prof_want(x, o, YN_SEQ, "hosts.ssh.options"))
			return -EINVAL;
		if (o->n > PROF_MAX_SSH_OPTS)
			return prof_perr(x, o, 0, "hosts.ssh.options: at most %d", PROF_MAX_SSH_OPTS);
		for (i = 0; i < o->n; i++) {
			const struct ynode *v = o->v[i];

			if (prof_want(x, v, YN_SCALAR, "hosts.ssh.options[]"))
				return -EINVAL;
			if (!strchr(v->s, '=') || v->s[0] == '-' || strlen(v->s) >= sizeof(p->ssh.opt[0]))
				return prof_perr(x, v, 0, "hosts.ssh.options: '%s': expected Key=Value "
					    "(ssh -o), e.g. ConnectTimeout=10", v->s);
			if (!ssh_option_ok(v->s))
				return prof_perr(x, v, 0, "hosts.ssh.options: '%.*s' is not allowed (a "
					    "profile may set only options that run no command: "
					    "ConnectTimeout, ServerAliveInterval, User, Port, "
					    "IdentityFile, StrictHostKeyChecking, ...)",
					    (int)strcspn(v->s, "="), v->s);
			snprintf(p->ssh.opt[i], sizeof(p->ssh.opt[i]), "%s", v->s);
		}
		p->ssh.nopts = (int)o->n;
	}
	p->ssh.on = 1;
	return 0;
}

/* m's agent: HOST:PORT, into host and *port */
static int agent_addr(struct pctx *x, const struct ynode *m, const char *where, char *host,
		      size_t len, int *port)
{
	const struct ynode *ag = ytree_get(m, "agent", NULL);
	char addr[96], *colon, *end;
	long p;

	if (prof_get_str(x, m, "agent", where, addr, sizeof(addr)))
		return -EINVAL;
	colon = strrchr(addr, ':');
	p = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || colon == addr || *end || p < 1 || p > 65535)
		return prof_perr(x, ag, 0, "%s.agent: '%s': expected HOST:PORT", where, addr);
	*colon = 0;
	snprintf(host, len, "%s", addr);
	*port = (int)p;
	return 0;
}

/* hosts.nodes[i]: its name, and its agent (HOST:PORT) or what ssh needs */
static int check_host_node(struct pctx *x, struct profile *p, const struct ynode *m, size_t i,
			   int ssh, int join)
{
	static const char *const nkeys[] = { "name", "agent", "ssh", "dev", "port", "nic", "switch",
					     NULL };
	struct prof_host *ph = &p->host[i];
	char where[32];
	uint64_t aport = 47300 + i;
	size_t j;

	snprintf(where, sizeof(where), "hosts.nodes[%zu]", i);
	if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, nkeys, where))
		return -EINVAL;
	char swarg[48] = "", *sc;

	ph->swi = -1;
	if (prof_get_str(x, m, "name", where, ph->name, sizeof(ph->name)) ||
	    prof_get_str(x, m, "nic", where, ph->nic, sizeof(ph->nic)) ||
	    prof_get_str(x, m, "switch", where, swarg, sizeof(swarg)))
		return -EINVAL;
	/* SWITCH:PORT names a switch host's port (hosts.switches); resolved
	 * once they are read */
	sc = strchr(swarg, ':');
	snprintf(ph->sw, sizeof(ph->sw), "%s", sc ? sc + 1 : swarg);
	if (sc) {
		*sc = 0;
		snprintf(ph->swname, sizeof(ph->swname), "%s", swarg);
	}
	if (!ytree_get(m, "name", NULL))
		return prof_perr(x, m, 0, "%s: missing key 'name'", where);
	/* interface names reach rdma-inject's and the tracer's command lines */
	if ((ph->nic[0] && !word_ifname_ok(ph->nic)) || (ph->sw[0] && !word_ifname_ok(ph->sw)))
		return prof_perr(x, ytree_get(m, ph->nic[0] && !word_ifname_ok(ph->nic) ? "nic" :
					     "switch", NULL), 0,
			    "%s.%s: '%s': not an interface name (letters, digits, _ . -, at most "
			    "15, not first . or -)", where, ph->nic[0] && !word_ifname_ok(ph->nic) ?
			    "nic" : "switch", ph->nic[0] && !word_ifname_ok(ph->nic) ? ph->nic : ph->sw);
	if (!strcmp(ph->name, "all") || strspn(ph->name, "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(ph->name))
		return prof_perr(x, ytree_get(m, "name", NULL), 0,
			    "%s.name: '%s': letters, digits, _ and - only (not 'all')", where,
			    ph->name);
	for (j = 0; j < i; j++)
		if (!strcmp(p->host[j].name, ph->name))
			return prof_perr(x, ytree_get(m, "name", NULL), 0, "%s.name: '%s' twice",
				    where, ph->name);
	p->nhosts = (int)i + 1;
	if (join) {	/* it dials rdmactl, under its name */
		const struct ynode *k = ytree_get(m, "agent", NULL) ?: ytree_get(m, "ssh", NULL) ?:
					ytree_get(m, "dev", NULL) ?: ytree_get(m, "port", NULL);

		if (k)
			return prof_perr(x, k, 0, "%s: with hosts.join the agent dials rdmactl "
					 "(rdma-agent --join HOST:PORT --name %s): give only name:, "
					 "nic:, switch:", where, ph->name);
		return 0;
	}
	if (ssh) {	/* rdmactl starts this one: ssh destination, device, port */
		if (ytree_get(m, "agent", NULL))
			return prof_perr(x, ytree_get(m, "agent", NULL), 0,
				    "%s.agent: with hosts.ssh rdmactl starts the agent "
				    "(give ssh:, dev: and port:)", where);
		if (!ytree_get(m, "ssh", NULL) || !ytree_get(m, "dev", NULL))
			return prof_perr(x, m, 0, "%s: needs ssh: (the destination) and dev: "
				    "(the RDMA device)", where);
		if (prof_get_str(x, m, "ssh", where, ph->ssh, sizeof(ph->ssh)) ||
		    safe_word(x, m, "ssh", where, ph->ssh) ||
		    prof_get_str(x, m, "dev", where, ph->dev, sizeof(ph->dev)) ||
		    safe_word(x, m, "dev", where, ph->dev) ||
		    prof_get_num(x, m, "port", where, NUM_PLAIN, 1, 65535, "1..65535", &aport))
			return -EINVAL;
		ph->aport = (int)aport;
		for (j = 0; j < i; j++)
			if (!strcmp(p->host[j].ssh, ph->ssh) && p->host[j].aport == ph->aport)
				return prof_perr(x, m, 0, "%s: %s port %d: hosts.nodes[%zu] has it "
					    "too (give each a port:)", where, ph->ssh,
					    ph->aport, j);
		return 0;
	}
	if (ytree_get(m, "ssh", NULL) || ytree_get(m, "dev", NULL) ||
	    ytree_get(m, "port", NULL))
		return prof_perr(x, ytree_get(m, "ssh", NULL) ?: ytree_get(m, "dev", NULL) ?:
			    ytree_get(m, "port", NULL), 0,
			    "%s: ssh:, dev: and port: need hosts.ssh (rdmactl starts the "
			    "agents); agents already running are given by agent: HOST:PORT",
			    where);
	if (!ytree_get(m, "agent", NULL))
		return prof_perr(x, m, 0, "%s: needs name: and agent: HOST:PORT", where);
	return agent_addr(x, m, where, ph->addr, sizeof(ph->addr), &ph->port);
}

/* hosts.switches[i]: {name, ssh, port | agent, ports} */
static int check_switch(struct pctx *x, struct profile *p, const struct ynode *m, size_t i)
{
	static const char *const keys[] = { "name", "ssh", "port", "agent", "ports", NULL };
	struct prof_switch *sw = &p->swh[i];
	const struct ynode *ps;
	char where[40];
	uint64_t aport = 47350 + i;
	size_t j, k;

	snprintf(where, sizeof(where), "hosts.switches[%zu]", i);
	if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where))
		return -EINVAL;
	snprintf(sw->name, sizeof(sw->name), "switch%zu", i);
	if (prof_get_str(x, m, "name", where, sw->name, sizeof(sw->name)))
		return -EINVAL;
	if (strspn(sw->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
	    strlen(sw->name) || !sw->name[0])
		return prof_perr(x, ytree_get(m, "name", NULL), 0,
			    "%s.name: '%s': letters, digits, _ and - only", where, sw->name);
	for (j = 0; j < i; j++)
		if (!strcmp(p->swh[j].name, sw->name))
			return prof_perr(x, ytree_get(m, "name", NULL) ?: m, 0,
				    "%s.name: '%s' twice", where, sw->name);
	ps = ytree_get(m, "ports", NULL);
	if (!ps)
		return prof_perr(x, m, 0, "%s: missing key 'ports' (the interfaces it forwards "
			    "between: [eth1, eth2])", where);
	if (prof_want(x, ps, YN_SEQ, "ports"))
		return -EINVAL;
	if (ps->n < 2 || ps->n > PROF_MAX_SWITCH_PORTS)
		return prof_perr(x, ps, 0, "%s.ports: %zu ports (expected 2 to %d)", where, ps->n,
			    PROF_MAX_SWITCH_PORTS);
	for (k = 0; k < ps->n; k++) {
		if (prof_want(x, ps->v[k], YN_SCALAR, "ports[]"))
			return -EINVAL;
		if (!word_ifname_ok(ps->v[k]->s))
			return prof_perr(x, ps->v[k], 0, "%s.ports: '%s': not an interface name "
				    "(letters, digits, _ . -, at most 15, not first . or -)", where,
				    ps->v[k]->s);
		for (j = 0; j < k; j++)
			if (!strcmp(sw->ports[j], ps->v[k]->s))
				return prof_perr(x, ps->v[k], 0, "%s.ports: '%s' twice", where,
					    ps->v[k]->s);
		snprintf(sw->ports[k], sizeof(sw->ports[k]), "%s", ps->v[k]->s);
	}
	sw->nports = (int)ps->n;
	if (p->ssh.on) {	/* rdmactl starts its agent (--no-rdma) over ssh */
		if (ytree_get(m, "agent", NULL))
			return prof_perr(x, ytree_get(m, "agent", NULL), 0,
				    "%s.agent: with hosts.ssh rdmactl starts the switch's agent "
				    "(give ssh: and port:)", where);
		if (!ytree_get(m, "ssh", NULL))
			return prof_perr(x, m, 0, "%s: needs ssh: (the destination)", where);
		if (prof_get_str(x, m, "ssh", where, sw->ssh, sizeof(sw->ssh)) ||
		    safe_word(x, m, "ssh", where, sw->ssh) ||
		    prof_get_num(x, m, "port", where, NUM_PLAIN, 1, 65535, "1..65535", &aport))
			return -EINVAL;
		sw->aport = (int)aport;
		for (j = 0; j < (size_t)p->nhosts; j++)
			if (!strcmp(p->host[j].ssh, sw->ssh) && p->host[j].aport == sw->aport)
				return prof_perr(x, m, 0, "%s: %s port %d: hosts.nodes[%zu] has it too "
					    "(give each a port:)", where, sw->ssh, sw->aport, j);
		for (j = 0; j < i; j++)
			if (!strcmp(p->swh[j].ssh, sw->ssh) && p->swh[j].aport == sw->aport)
				return prof_perr(x, m, 0, "%s: %s port %d: hosts.switches[%zu] has it "
					    "too (give each a port:)", where, sw->ssh, sw->aport, j);
		return 0;
	}
	if (ytree_get(m, "ssh", NULL) || ytree_get(m, "port", NULL))
		return prof_perr(x, ytree_get(m, "ssh", NULL) ?: ytree_get(m, "port", NULL), 0,
			    "%s: ssh: and port: need hosts.ssh; a switch's agent already running "
			    "(rdma-agent --no-rdma) is given by agent: HOST:PORT", where);
	if (!ytree_get(m, "agent", NULL))
		return prof_perr(x, m, 0, "%s: needs agent: HOST:PORT (its rdma-agent --no-rdma)",
			    where);
	return agent_addr(x, m, where, sw->addr, sizeof(sw->addr), &sw->port);
}

/* each node's switch: a port of which switch host (by name, or the one
 * switch that has a port so called) */
static int resolve_switch_ports(struct pctx *x, struct profile *p, const struct ynode *ns)
{
	for (int i = 0; i < p->nhosts; i++) {
		struct prof_host *ph = &p->host[i];
		const struct ynode *at = ytree_get(ns->v[i], "switch", NULL);
		int j, k, hit = -1, hits = 0;

		if (!ph->sw[0]) {
			if (ph->swname[0])
				return prof_perr(x, at, 0, "hosts.nodes[%d].switch: '%s:': which port?",
					    i, ph->swname);
			continue;
		}
		for (j = 0; j < p->nswitches; j++) {
			if (ph->swname[0] && strcmp(ph->swname, p->swh[j].name))
				continue;
			for (k = 0; k < p->swh[j].nports && strcmp(p->swh[j].ports[k], ph->sw); k++)
				;
			if (k < p->swh[j].nports) {
				hit = hit < 0 ? j : hit;
				hits++;
			}
		}
		if (hits > 1)
			return prof_perr(x, at, 0, "hosts.nodes[%d].switch: '%s' is a port of %s and of "
				    "another switch: give it as SWITCH:%s", i, ph->sw,
				    p->swh[hit].name, ph->sw);
		if (hit < 0 && (p->nswitches || ph->swname[0]))
			return prof_perr(x, at, 0, "hosts.nodes[%d].switch: '%s%s%s' is not a port of "
				    "%s (hosts.switches[].ports)", i, ph->swname,
				    ph->swname[0] ? ":" : "", ph->sw,
				    ph->swname[0] ? "a switch of that name" : "any switch host");
		ph->swi = hit;
	}
	return 0;
}

/* "ADDR:PORT": something before the last colon, a port 1..65535 after it */
static int addr_port_ok(const char *s)
{
	const char *c = strrchr(s, ':');

	return c && c != s && atoi(c + 1) >= 1 && atoi(c + 1) <= 65535 &&
	       strspn(c + 1, "0123456789") == strlen(c + 1);
}

/* hosts.slurm: {nodes: N, dev:, listen:, wait:}: rdmactl run inside an
 * allocation takes its first N nodes, named node0.. in its order, and
 * starts their agents (ctl/exp/slurm.c); nothing else under hosts: */
static int check_slurm(struct pctx *x, struct profile *p, const struct ynode *h,
		       const struct ynode *sm)
{
	static const char *const others[] = { "token_file", "ssh", "nodes", "switches", "join",
					      NULL };
	static const char *const keys[] = { "nodes", "dev", "listen", "wait", NULL };
	const struct ynode *k;
	uint64_t n = 0;

	for (int i = 0; others[i]; i++)
		if ((k = ytree_get(h, others[i], NULL)))
			return prof_perr(x, k, 0, "hosts.%s: with hosts.slurm the nodes are the "
					 "allocation's, and rdmactl starts their agents with a "
					 "token of its own: no %s", others[i], others[i]);
	p->join.wait_ns = 60000000000ULL;
	if (prof_want(x, sm, YN_MAP, "hosts.slurm") ||
	    prof_keys_known(x, sm, keys, "hosts.slurm") ||
	    prof_get_num(x, sm, "nodes", "hosts.slurm", NUM_PLAIN, 2, PROF_MAX_HOSTS, "2..16", &n) ||
	    prof_get_str(x, sm, "dev", "hosts.slurm", p->slurm.dev, sizeof(p->slurm.dev)) ||
	    prof_get_str(x, sm, "listen", "hosts.slurm", p->slurm.listen,
			 sizeof(p->slurm.listen)) ||
	    prof_get_num(x, sm, "wait", "hosts.slurm", NUM_TIME, 1000000000ULL, 86400000000000ULL,
			 "a time: 1s..24h", &p->join.wait_ns))
		return -EINVAL;
	if (!n)
		return prof_perr(x, sm, 0, "hosts.slurm: missing key 'nodes' (how many of the "
				 "allocation's nodes: 2..16)");
	if (p->slurm.dev[0] && strspn(p->slurm.dev, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
				       strlen(p->slurm.dev))
		return prof_perr(x, ytree_get(sm, "dev", NULL), 0, "hosts.slurm.dev: '%s': expected "
				 "an RDMA device name ([a-z0-9_-], as mlx5_0)", p->slurm.dev);
	if (p->slurm.listen[0] && !addr_port_ok(p->slurm.listen))
		return prof_perr(x, ytree_get(sm, "listen", NULL), 0, "hosts.slurm.listen: '%s': "
				 "expected ADDR:PORT (an address the nodes reach)", p->slurm.listen);
	p->slurm.want = 1;
	p->nodes = (int)n;
	snprintf(p->backend, sizeof(p->backend), "hosts");
	return 0;
}

int prof_check_hosts(struct pctx *x, struct profile *p, const struct ynode *h)
{
	static const char *const keys[] = { "token_file", "ssh", "nodes", "switches", "join",
					    "slurm", NULL };
	static const char *const jkeys[] = { "listen", "wait", NULL };
	const struct ynode *ns, *sm, *sws, *jm;
	size_t i;

	if (prof_want(x, h, YN_MAP, "hosts") || prof_keys_known(x, h, keys, "hosts"))
		return -EINVAL;
	if ((sm = ytree_get(h, "slurm", NULL)))
		return check_slurm(x, p, h, sm);
	jm = ytree_get(h, "join", NULL);
	if (jm) {
		const struct ynode *l = ytree_get(jm, "listen", NULL);

		p->join.wait_ns = 60000000000ULL;
		if (prof_want(x, jm, YN_MAP, "hosts.join") ||
		    prof_keys_known(x, jm, jkeys, "hosts.join") ||
		    prof_get_str(x, jm, "listen", "hosts.join", p->join.listen,
				 sizeof(p->join.listen)) ||
		    prof_get_num(x, jm, "wait", "hosts.join", NUM_TIME, 1000000000ULL,
				 86400000000000ULL, "a time: 1s..24h", &p->join.wait_ns))
			return -EINVAL;
		if (!l)
			return prof_perr(x, jm, 0, "hosts.join: missing key 'listen' (ADDR:PORT "
					 "rdmactl listens on, as 0.0.0.0:47000)");
		if (!addr_port_ok(p->join.listen))
			return prof_perr(x, l, 0, "hosts.join.listen: '%s': expected ADDR:PORT",
					 p->join.listen);
		if (ytree_get(h, "ssh", NULL))
			return prof_perr(x, jm, 0, "hosts.join: the agents dial rdmactl; ssh: "
					 "starts them for it to dial: one or the other");
		p->join.on = 1;
	}
	snprintf(p->ssh.agent, sizeof(p->ssh.agent), "rdma-agent");
	sm = ytree_get(h, "ssh", NULL);
	if (sm && check_ssh(x, p, sm))
		return -EINVAL;
	if (sm && ytree_get(h, "token_file", NULL))
		return prof_perr(x, ytree_get(h, "token_file", NULL), 0,
			    "hosts.token_file: with ssh: rdmactl gives the agents it starts a fresh "
			    "token (remove token_file)");
	if (!sm && !ytree_get(h, "token_file", NULL))
		return prof_perr(x, h, 0, "hosts: missing key 'token_file' (the agents' shared token), "
			    "or ssh: (rdmactl starts the agents)");
	if (prof_get_str(x, h, "token_file", "hosts", p->token_file, sizeof(p->token_file)))
		return -EINVAL;
	ns = ytree_get(h, "nodes", NULL);
	if (!ns)
		return prof_perr(x, h, 0, "hosts: missing key 'nodes' (a list: - name: a, %s)",
			    sm ? "ssh: HOST, dev: DEVICE" : "agent: HOST:PORT");
	if (prof_want(x, ns, YN_SEQ, "hosts.nodes"))
		return -EINVAL;
	if (ns->n < 2 || ns->n > 16)
		return prof_perr(x, ns, 0, "hosts.nodes: %zu nodes (expected 2 to 16)", ns->n);
	for (i = 0; i < ns->n; i++)
		if (check_host_node(x, p, ns->v[i], i, sm != NULL, jm != NULL))
			return -EINVAL;
	sws = ytree_get(h, "switches", NULL);
	if (sws) {
		if (prof_want(x, sws, YN_SEQ, "hosts.switches"))
			return -EINVAL;
		if (sws->n < 1 || sws->n > PROF_MAX_SWITCHES)
			return prof_perr(x, sws, 0, "hosts.switches: %zu switch hosts (expected 1 to "
				    "%d)", sws->n, PROF_MAX_SWITCHES);
		for (i = 0; i < sws->n; i++) {
			if (check_switch(x, p, sws->v[i], i))
				return -EINVAL;
			p->nswitches = (int)i + 1;
		}
	}
	if (resolve_switch_ports(x, p, ns))
		return -EINVAL;
	p->nodes = p->nhosts;
	snprintf(p->backend, sizeof(p->backend), "hosts");
	return 0;
}

