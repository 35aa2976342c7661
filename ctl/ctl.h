/* SPDX-License-Identifier: MIT */
#ifndef RTB_CTL_H
#define RTB_CTL_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>
#include "../lib/proto.h"

#define TB_MAX_NODES 16
#define TB_SCHEMA 1

/* global flags of one rdmactl invocation */
struct ctl {
	int json;
	int verbose;
};

/* --- paths.c: where our files live (build tree or installed) */
const char *ctl_libexec_dir(void);	/* mkimage.sh, topology.sh, init.sh */
const char *ctl_bin_dir(void);		/* rdma-agent, rdma-inject */
const char *ctl_bpf_dir(void);
const char *ctl_state_dir(void);	/* one running testbed */
const char *ctl_cache_dir(void);	/* VM image, kernel */
int ctl_mkdir_p(const char *path, mode_t mode);
int ctl_rm_rf(const char *path);
/* run argv; stdout captured into out (NUL-terminated) if out != NULL; returns
 * the exit status (0..255), 128+sig, or -errno when it could not run */
int ctl_run(char *const argv[], char *out, size_t outlen);
double ctl_now(void);

/* --- testbed state (testbed.c) */
enum tb_backend { TB_AUTO, TB_VM, TB_HOST, TB_HOSTS /* a profile's own hosts, no testbed */ };

struct tb_node {
	char name[32];
	char dev[32];
	char host[64];
	int port;
	pid_t agent_pid;	/* host backend only */
};

struct tb_state {
	enum tb_backend backend;
	int nodes;
	int mtu;		/* RoCE MTU asked for */
	int netdev_mtu;
	pid_t qemu_pid;
	char accel[8];
	char accel_why[160];
	char kver[64];
	char token[PROTO_TOKEN_MAX + 1];
	double up_s, image_s, boot_s;
	int image_built;
	struct tb_node node[TB_MAX_NODES];
};

int tb_load(struct tb_state *s);	/* -ENOENT when no testbed is up */
int tb_save(const struct tb_state *s);
const char *tb_backend_name(enum tb_backend b);
/* index of node "nodeN" or "N", -1 if none */
/* 48 hex characters from /dev/urandom */
int tb_gen_token(char *buf, size_t len);
int tb_node_index(const struct tb_state *s, const char *name);

/* --- vm.c / host.c backends */
struct tb_up_opts {
	int nodes;
	int mtu;
	int timeout_s;
	int mem_mb;
	const char *accel;	/* auto|kvm|tcg */
};
int vm_up(struct tb_state *s, const struct tb_up_opts *o);
int vm_down(const struct tb_state *s);
int vm_alive(const struct tb_state *s);
int host_rxe_available(void);
int host_up(struct tb_state *s, const struct tb_up_opts *o);
int host_down(const struct tb_state *s);
int host_alive(const struct tb_state *s);
/* wait until every agent answers hello; 0 or -ETIMEDOUT / -ECHILD (backend died) */
int tb_wait_agents(const struct tb_state *s, int timeout_s, int (*alive)(const struct tb_state *));

/* --- agentc.c: controller side of the control channel */
struct agentc {
	int fd;
	char where[96];
	const char *token;
};
int agentc_open(struct agentc *c, const struct tb_state *s, int node, int timeout_ms);
void agentc_close(struct agentc *c);
/* *res new reference; on error err holds "node0: reason" */
int agentc_call(struct agentc *c, const char *cmd, json_t *args_stolen, json_t **res,
		int timeout_ms, char *err, size_t errlen);

/* --- commands */
int cmd_testbed(struct ctl *ctl, int argc, char **argv);
int cmd_p2p(struct ctl *ctl, int argc, char **argv);
int cmd_perftest(struct ctl *ctl, int argc, char **argv);
int cmd_inject(struct ctl *ctl, int argc, char **argv);
int cmd_collective(struct ctl *ctl, int argc, char **argv);
int cmd_train(struct ctl *ctl, int argc, char **argv);
int cmd_validate(struct ctl *ctl, int argc, char **argv);
int cmd_run(struct ctl *ctl, int argc, char **argv);
int cmd_report(struct ctl *ctl, int argc, char **argv);
int cmd_tui(struct ctl *ctl, int argc, char **argv);
int cmd_storage(struct ctl *ctl, int argc, char **argv);
int cmd_kv(struct ctl *ctl, int argc, char **argv);
int cmd_counters(struct ctl *ctl, int argc, char **argv);

#endif
