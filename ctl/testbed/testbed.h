/* SPDX-License-Identifier: MIT */
/*
 * The testbed room: N SoftRoCE nodes with one rdma-agent each, in a VM or
 * on this host (backend.h), and the state of the one running testbed
 * ($STATE/testbed.json + token). What the rooms above see: the state, its
 * nodes' agents, up and down.
 */
#ifndef RTB_CTL_TESTBED_H
#define RTB_CTL_TESTBED_H

#include <limits.h>
#include <sys/types.h>
#include "ctl/base/ctl.h"
#include "ctl/agent/agent.h"
#include "lib/proto.h"

#define TB_MAX_NODES 16		/* SoftRoCE nodes: what workloads and profiles use */
#define TB_MAX_AGENTS 256	/* agents of an agents-only testbed (control-plane scale) */
#define TB_SCHEMA 1

/* TB_AGENTS: rdma-agent --no-rdma processes on this host and nothing else,
 * up to TB_MAX_AGENTS: the control plane at scale, no workload runs there */
enum tb_backend { TB_AUTO, TB_VM, TB_HOST, TB_AGENTS,
		  TB_HOSTS /* a profile's own hosts, no testbed */ };

struct tb_node {
	char name[32];
	char dev[32];
	char host[64];
	int port;
	pid_t agent_pid;	/* host backend only */
	pid_t qemu_pid;		/* per-node VMs: the node's own qemu */
	int ssh_port;		/* VM backend: its sshd's forwarded port */
	char kver[64];		/* per-node VMs: its own kernel (testbed up --kernel), "" the testbed's */
};

/* the VM backend's kernels: one for every node (a qemu each, joined by a
 * bridge on this host, the switch), or one VM whose kernel holds them all;
 * auto (testbed up's default) is per-node up to TB_PER_NODE_AUTO_MAX nodes */
enum tb_topology { TB_PER_NODE, TB_SHARED, TB_TOPO_AUTO };
#define TB_PER_NODE_AUTO_MAX 4
#define TB_STR_(x) #x
#define TB_STR(x) TB_STR_(x)	/* a number, as text in messages */

struct tb_state {
	enum tb_backend backend;
	int nodes;
	int mtu;		/* RoCE MTU asked for */
	int netdev_mtu;
	enum tb_topology topology;	/* VM backend */
	int node_mem_mb;		/* per-node VMs: each one's memory */
	pid_t qemu_pid;			/* the shared kernel's VM */
	char accel[8];
	char accel_why[160];
	char kver[64];
	char kernel_path[PATH_MAX];	/* per-node VMs: what a rebooted node boots */
	char token[PROTO_TOKEN_MAX + 1];
	double up_s, image_s, boot_s;
	int image_built;
	/* per-node VMs: the switch's agent on this host (rdma-agent --no-rdma,
	 * whose rdma-inject reaches the switch ports); port 0: none */
	struct tb_node sw;
	int switch_xdp;		/* per-node VMs: the switch is rdma-inject forward, not the bridge */
	struct tb_node node[TB_MAX_AGENTS];
};

/* what `testbed up` is asked for */
struct tb_up_opts {
	enum tb_backend backend;	/* TB_AUTO: host if this kernel has rdma_rxe */
	int nodes;
	int mtu;
	int timeout_s;
	int mem_mb;		/* 0: 1024 + 64 per node above 3; per node: 3x the image + 256 */
	const char *accel;	/* auto|kvm|tcg */
	enum tb_topology topology;	/* VM backend; TB_TOPO_AUTO: by the node count */
	const char *kver[TB_MAX_NODES];	/* per-node VMs: node i's kernel version, NULL the default */
	int switch_xdp;		/* per-node VMs: rdma-inject forward on the switch ports */
};

#define TB_UP_DEFAULTS { .backend = TB_AUTO, .nodes = 3, .mtu = 1024, .timeout_s = 300, \
			  .accel = "auto", .topology = TB_TOPO_AUTO }

int tb_load(struct tb_state *s);	/* -ENOENT when no testbed is up */
/* the same for running workloads: -EOPNOTSUPP (said) on an agents-only one */
int tb_load_rdma(struct tb_state *s);
const char *tb_backend_name(enum tb_backend b);
/* "auto"|"vm"|"host"|"agents" -> 0 and *b, else -EINVAL */
int tb_backend_parse(const char *name, enum tb_backend *b);
/* index of node "nodeN" or "N", -ENOENT if none */
int tb_node_index(const struct tb_state *s, const char *name);
/* a control connection to node i's agent; when there is none, what node
 * i's kernel said went wrong first (tb_vm_kernel_said) is said too */
int tb_agent_open(struct agentc *c, const struct tb_state *s, int node, int timeout_ms);
/* 1 and buf: the first line of node i's console log (VM backend) where
 * its kernel reported a lockup, a panic, an oops or a hung task; else 0 */
int tb_vm_kernel_said(const struct tb_state *s, int node, char *buf, size_t len);
/* node i's console log (VM backend) */
void tb_serial_path(const struct tb_state *s, int i, char *buf, size_t len);
/* one to the switch's agent: -ENOENT when the testbed has none (a shared
 * kernel's switch is in the VM: any node's agent reaches it) */
int tb_switch_open(struct agentc *c, const struct tb_state *s, int timeout_ms);

/* s as one shell word ('it', every ' as '\'') appended at *at, a space
 * after: 0 or -E2BIG */
int tb_sh_quote(char *buf, size_t len, size_t *at, const char *s);
/* the testbed VM's ssh client config ($STATE/ssh/config): 0, or -ENOENT
 * (said) */
int tb_ssh_config(char *buf, size_t len);
/* the config's Host for node i: "rdma-testbed-nodeI" (the shared kernel's
 * nodes all name its one VM) */
const char *tb_ssh_host(int node, char *buf, size_t len);
/* "per-node"|"shared" */
const char *tb_topology_name(enum tb_topology t);
/* a VM a node (the switch on this host) */
int tb_per_node(const struct tb_state *s);
/* node's port of that switch: "rtbswN" */
void tb_switch_port(int node, char *buf, size_t len);

/* what happens to one node of per-node VMs (rdmactl testbed crash|freeze|
 * thaw|reboot|port): its qemu killed (the kernel gone without a word),
 * stopped (a hung host) or continued, killed and booted again (its agent
 * back and ACTIVE), its switch port down or up */
enum tb_node_fault { TB_CRASH, TB_FREEZE, TB_THAW, TB_REBOOT, TB_PORT_DOWN, TB_PORT_UP,
		     TB_NIC_RESET };
/* 0, or -errno with the reason in err; s updated (and saved) on a reboot */
int tb_node_fault(struct tb_state *s, int node, enum tb_node_fault f, int timeout_s, char *err,
		  size_t errlen);

/* f on the running testbed's node name, under the testbed's lock (s: the
 * state, loaded and saved): the node's index, or -errno with err; *old its
 * qemu before. A nic reset (any backend with rxe: the node's agent removes
 * and adds its device) leaves what it did in err on success too */
int tb_fault_node(const char *name, enum tb_node_fault f, int timeout_s, struct tb_state *s,
		  pid_t *old, char *err, size_t errlen);

/* node i of per-node VMs has its qemu (1), or crashed (0); 1 on other backends */
int tb_node_running(const struct tb_state *s, int i);

/* bring a testbed up (0, -EINTR when interrupted, -errno; messages printed) */
int tb_up(const struct tb_up_opts *o);
/* tear the running one down (0 when none is up) */
int tb_down(void);

/* rdmactl testbed up|status|down */
int cmd_testbed(struct ctl *ctl, int argc, char **argv);

#endif
