/* SPDX-License-Identifier: MIT */
#ifndef RTB_AGENT_H
#define RTB_AGENT_H

#include <jansson.h>
#include <pthread.h>
#include "../lib/proto.h"
#include "../workloads/verbs.h"

#define AGENT_MAX_ARMS 64
#define AGENT_MAX_JOBS 16
/*
 * Control connections: slots (open ones and closed ones still cleaning up).
 * Connections that have not authenticated share a small pool: a new one
 * past it evicts the oldest, so strangers (behind qemu's user network every
 * host connection has one address) cannot keep the controller out; the
 * authenticated ones have their own cap, which strangers never touch.
 */
#define AGENT_MAX_CONNS 128
#define AGENT_MAX_CONNS_OPEN 64		/* authenticated, open */
#define AGENT_MAX_CONNS_PRE 16		/* not authenticated yet */
/* the handshake's deadline and largest frame (the controller answers the
 * challenge at once: a round trip, even under TCG) */
#define AGENT_AUTH_TIMEOUT_MS 2000
#define AGENT_AUTH_MAX_FRAME 1024

struct arm;
struct job;

struct agent {
	struct vb_dev dev;	/* dev.ctx NULL: gone (a nic reset that did not bring it back) */
	/* who uses dev.ctx outside an arm's thread holds it shared (hello,
	 * prepare); a nic reset holds it alone (nicreset.c) */
	pthread_rwlock_t dev_rw;
	int gid_index_arg;	/* --gid-index, or -1: found at start (and after a reset) */
	char name[64];
	char token[PROTO_TOKEN_MAX + 1];
	char listen_ip[64];	/* the control address: no fault rule may go on its interface */
	int no_rdma;		/* --no-rdma: control plane only, dev unopened (scale tests) */
	unsigned int netdev_ifindex;	/* the RoCE GID's netdev (agent/inject.c; 0: not found yet) */
	long ncpu;			/* possible CPUs: the values of a per-CPU map */
	pthread_mutex_t lock;		/* guards arms[], jobs[], next_id */
	struct arm *arms[AGENT_MAX_ARMS];
	struct job *jobs[AGENT_MAX_JOBS];
	unsigned int next_id;
	unsigned int next_conn;		/* control connections, numbered from 1 */
	/* injector rules added with "lease": removed when their connection closes */
	struct {
		unsigned int conn;
		unsigned int id;
	} leased[64];
	int nleased;
	unsigned int fwd_conn;	/* the connection whose "forward" runs (stopped with it), 0 none */
	int releasing;		/* inject_release calls deleting rules right now */
	int stopping;		/* shutdown under way: the lease renewer ends */
	int closing;		/* connections being closed: a wait in one returns at once */
	pthread_t renewer;	/* pushes the leased rules' deadlines on (inject.c) */
	int renewer_up;
	/* the connections being served (under lock): their sockets, to wake
	 * them at shutdown or evict them, and where they stand */
	struct {
		int fd;		/* -1: free */
		enum { CONN_FREE, CONN_PRE, CONN_AUTHED, CONN_CLOSING } state;
		unsigned long long since_ns;	/* accepted (the pool evicts the oldest) */
		char peer[64];
	} conns[AGENT_MAX_CONNS];
	int nconns;
	pthread_cond_t conns_gone;	/* signalled when nconns drops */
};

/* a leased rule lives AGENT_LEASE_MS past its last renewal (every third of
 * that): an agent killed with -9 leaves faults for that long at most */
#define AGENT_LEASE_MS PROTO_LEASE_MS
int inject_renewer_start(struct agent *a);
void inject_renewer_stop(struct agent *a);
/* the injector's tracking (ebpf/inject_abi.h) at an arm's start: on, and a
 * new count (qp 1 is the first QP the arm's round shows each hook); no-op
 * when the injector is not in use */
void inject_track_begin(struct agent *a);

/* conn.c: a slot for a new connection from peer (in the pool of those not
 * authenticated, its oldest evicted when full), or -1 (no slot: *why); the
 * connection authenticated: 0, or -1 (*why: the cap, or it was evicted); a
 * slot given back; every connection woken and waited for */
void agent_conns_init(struct agent *a);
int agent_conn_take(struct agent *a, int fd, const char *peer, const char **why);
int agent_conn_authed(struct agent *a, int slot, const char **why);
void agent_conn_closing(struct agent *a, int slot);	/* before its close() */
void agent_conn_put(struct agent *a, int slot);
int agent_conns_close(struct agent *a, int timeout_ms);

/* one request: fills *result or err; returns 0 / -errno */
int agent_dispatch(struct agent *a, unsigned int conn, const char *cmd, json_t *args,
		   json_t **result, char *err, size_t errlen);
/* serve one connection until it closes; taken (NULL: none) is called once,
 * at its second request (a joined connection the controller took) */
void agent_serve_conn(struct agent *a, int fd, int slot, void (*taken)(void *), void *arg);
/* --join HOST:PORT (join.c): dial the controller, one spare connection
 * always waiting; 0, -EINVAL (not HOST:PORT), -EAGAIN */
int agent_join_start(struct agent *a, const char *hostport);
void agent_join_stop(void);
void agent_shutdown(struct agent *a);

/* arm.c */
int arm_prepare(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int arm_connect(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int arm_start(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int arm_wait(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int arm_destroy(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int arm_stop(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	     size_t errlen);
/* conn 0: all arms; else those made on that control connection. Returns how many. */
int arm_release(struct agent *a, unsigned int conn);
/* the device about to go: every arm stopped, its verbs objects destroyed;
 * one still running ends with why as its error. They stay until destroyed.
 * Returns how many ended so */
int arm_reset_all(struct agent *a, const char *why);

/* nicreset.c: the rxe device removed and added again ("nic_reset") */
int nic_reset(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	      size_t errlen);

/* perftest.c: run the real perftest binaries next to our own numbers */
int job_start(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
int job_wait(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
void job_kill_all(struct agent *a);

/* inject.c: the node's injector (rdma-inject) and hw counters; the netdev
 * the agent's RoCE GID is on, by name (0, or -errno) */
int agent_gid_netdev(const struct agent *a, char *name, size_t len);
int inject_run(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);
/* remove the rules leased by a control connection; returns how many */
int inject_release(struct agent *a, unsigned int conn);
/* wait (at most timeout_ms) until no inject_release is deleting rules */
void inject_quiesce(struct agent *a, int timeout_ms);
/* every arm: [{id, workload, state, progress}] (arm.c) */
json_t *arm_snapshot(struct agent *a);
/* --metrics ADDR:PORT: the OpenMetrics endpoint (metrics.c); 0 or -errno */
int metrics_start(struct agent *a, const char *addr);
void metrics_stop(void);
int hw_counters(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen);

#endif
