/* SPDX-License-Identifier: MIT */
/*
 * Inside the testbed room: a backend is one ops table (rdma-core's
 * verbs_context_ops), looked up once by kind. up.c drives them;
 * vm.c and host.c implement them and use only state.c below them.
 */
#ifndef RTB_CTL_TESTBED_BACKEND_H
#define RTB_CTL_TESTBED_BACKEND_H

#include <signal.h>
#include "ctl/testbed/testbed.h"

struct tb_backend_ops {
	enum tb_backend kind;
	/* this machine can run it (host: rdma_rxe loads) */
	int (*available)(void);
	/* fill s (nodes, token, agents) and start everything; 0 or -errno */
	int (*up)(struct tb_state *s, const struct tb_up_opts *o);
	int (*down)(const struct tb_state *s);
	/* the testbed of s still exists */
	int (*alive)(const struct tb_state *s);
};

extern const struct tb_backend_ops tb_vm_ops;
extern const struct tb_backend_ops tb_host_ops;
extern const struct tb_backend_ops tb_agents_ops;

/* the ops of s->backend (TB_VM, TB_HOST or TB_AGENTS) */
const struct tb_backend_ops *tb_ops(enum tb_backend b);

/* --- state.c */
int tb_save(const struct tb_state *s);
/* pid is an rdma-agent with arg among its arguments (its device, or its
 * name: a saved pid may have been reused by another process) */
int tb_is_agent(pid_t pid, const char *arg);
/* $STATE/file */
int tb_state_path(char *buf, size_t len, const char *file);
/* the seconds the cache keeps under NAME (set > 0: keep set); 0 when
 * unknown. What the progress lines' ETAs come from */
double tb_cache_seconds(const char *name, double set);
/* on a terminal (and not -q): "\r  WHAT, EL s, ETA N s" (no ETA when
 * eta_total is not past el); done: the line cleared */
void tb_progress(const char *what, double el, double eta_total, int done);
/* wait until every agent answers hello with its port ACTIVE: 0, -ETIMEDOUT,
 * -ECHILD (alive() said the backend died), -EINTR (ctl_interrupted) */
int tb_wait_agents(const struct tb_state *s, int timeout_s, int (*alive)(const struct tb_state *));

/* --- qemu.c: the VM backend's qemu processes */
/* qemu's arguments up to the NICs into a[*n..]; the strings live until
 * the next call */
void qemu_base_args(char **a, int *n, const char *name, const char *kernel, const char *initrd,
		    const char *serial, int mem_mb, int cpus, const char *accel, const char *append);
/* s->accel (and accel_why): kvm when asked or when the probe boot works */
void qemu_choose_accel(struct tb_state *s, const char *want, const char *kernel,
		       const char *initrd);
/* args started daemonized, its pid from its pid file: 0 or -errno (said) */
int qemu_start(char **args, int n, const char *name, pid_t *pid, const char *who);
pid_t qemu_pid_file(const char *file);
/* pid is a qemu of ours (a saved pid may have been reused) */
int qemu_ours(pid_t pid);
/* until pid is gone (not a zombie), at most ms: 0, or -ETIMEDOUT */
int qemu_wait_gone(pid_t pid, int ms);
/* SIGTERM, up to 10 s, then SIGKILL: 0 once gone */
int qemu_stop(pid_t pid);
int tb_file_has(const char *path, const char *needle);
/* the last lines of a file, to stderr */
void tb_tail_file(const char *path, int lines);

/* --- vm.c, for nodefault.c: node i's kernel and initrd, and its qemu
 * booted (ssh: with the sshd port forwarded) */
void vm_node_image(const struct tb_state *s, int i, char *kernel, size_t klen, char *initrd,
		   size_t ilen);
int vm_boot_node(struct tb_state *s, int i, int ssh, const char *kernel, const char *initrd);

/* --- switch.c: the bridge on this host that joins per-node VMs */
int tb_switch_exists(void);
int tb_switch_create(int mtu);			/* 0 or -errno (said) */
int tb_switch_attach(int node, int mtu);	/* node's tap: a port, up */
/* node's port up or down: 0, or -EIO with ip's words in err */
int tb_switch_port_set(int node, int up, char *err, size_t errlen);
int tb_switch_remove(int nodes);		/* ports and bridge; 0 when none */
/* its agent on 127.0.0.1:port, saved in s->sw (0 or -errno, said) */
/* --switch xdp: rdma-inject forward on the ports, by the nodes' MACs;
 * stop: its state gone once no rule is left (flush if-empty) */
int tb_switch_xdp_start(const struct tb_state *s);	/* 0 or -errno (said) */
int tb_switch_xdp_port(int i);	/* node i's new tap in its old place: 0 or -EIO */
void tb_switch_xdp_stop(void);
/* the MAC of node i's RoCE NIC (the switch port's far end) */
#define TB_MAC_DATA "52:54:00:72:64:%02x"
int tb_switch_agent_start(struct tb_state *s, int port);
int tb_switch_agent_running(const struct tb_state *s);
void tb_switch_agent_stop(const struct tb_state *s);

/* --- exec.c: rdmactl testbed exec and cp (a cmd_entry each: ctl unused,
 * argv after the verb) */
int tb_cmd_exec(void *ctl, int argc, char **argv);
int tb_cmd_cp(void *ctl, int argc, char **argv);

#endif
