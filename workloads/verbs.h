/* SPDX-License-Identifier: MIT */
/*
 * Thin helpers over libibverbs shared by every workload: the agent's device
 * (one device/port/GID per agent), endpoint exchange records and the QP state
 * ladder. libibverbs mixes conventions (ibv_modify_qp returns +errno, create
 * calls NULL + errno); everything here returns 0 / -errno.
 */
#ifndef RTB_VERBS_H
#define RTB_VERBS_H

#include <infiniband/verbs.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct vb_dev {
	struct ibv_context *ctx;
	char name[IBV_SYSFS_NAME_MAX];
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	struct ibv_device_attr attr;
};

/* gid_index < 0: find the RoCE v2 GID with an IPv4-mapped address, waiting up
 * to wait_ms for it to appear (rxe adds GIDs after the port goes ACTIVE) */
int vb_dev_open(struct vb_dev *d, const char *name, uint8_t port, int gid_index, int wait_ms);
void vb_dev_close(struct vb_dev *d);
/* the first device (ibv_get_device_list's order) whose port is ACTIVE on
 * Ethernet (RoCE) into name; *nactive: how many are. 0, or -ENODEV: none */
int vb_dev_pick(uint8_t port, char *name, size_t len, int *nactive);
int vb_port_query(const struct vb_dev *d, struct ibv_port_attr *pa);
/* "ACTIVE", "DOWN", ... (ibv_port_state_str says "active": ours match ibv_devinfo) */
const char *vb_port_state_name(enum ibv_port_state st);
void vb_gid_str(const union ibv_gid *g, char *buf, size_t len);
int vb_gid_parse(const char *s, union ibv_gid *g);
/* IPv4 address of an IPv4-mapped GID as text, "" otherwise */
void vb_gid_ipv4(const union ibv_gid *g, char *buf, size_t len);

/* what a peer needs to reach one of our QPs and buffers */
struct vb_ep {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

json_t *vb_ep_to_json(const struct vb_ep *ep);
int vb_ep_from_json(struct vb_ep *ep, const json_t *j);

struct vb_rc_opts {
	uint8_t timeout;	/* 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;	/* 7 = infinite on rxe */
	uint8_t rnr_retry;
	uint8_t max_rd_atomic;
	uint8_t min_rnr_timer;	/* 0: 12 (0.64 ms); 1 = 0.01 ms */
};

/* the RC transport knobs a workload lets its user set (as option values) */
struct vb_rc_knobs {
	uint64_t timeout, retry_cnt, rnr_retry;
};

/* option table entries for struct vb_rc_knobs at offset BASE in a workload's cfg */
#define VB_RC_KNOB_OPTS(BASE)                                                                      \
	{ "rc_timeout", OPT_UINT, (BASE) + offsetof(struct vb_rc_knobs, timeout), 0, 31, "14",     \
	  NULL, "rc: local ACK timeout, 4.096 us x 2^N (14: 67 ms; 0: infinite)" },                \
	{ "rc_retry_cnt", OPT_UINT, (BASE) + offsetof(struct vb_rc_knobs, retry_cnt), 0, 7, "7",   \
	  NULL, "rc: retransmissions before failing (7 = infinite on rxe)" },                      \
	{ "rc_rnr_retry", OPT_UINT, (BASE) + offsetof(struct vb_rc_knobs, rnr_retry), 0, 7, "7",   \
	  NULL, "rc: RNR retries (7 = infinite)" }

/* what an rc arm's comparison rests on: its ACK timeout and retries */
static inline json_t *vb_rc_knobs_json(const struct vb_rc_knobs *k)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "timeout", (json_int_t)k->timeout, "timeout_ns",
			 (json_int_t)(k->timeout ? 4096ULL << k->timeout : 0), "retry_cnt",
			 (json_int_t)k->retry_cnt, "rnr_retry", (json_int_t)k->rnr_retry);
}

/* the QP attributes of knobs k, with max_rd_atomic rd */
static inline struct vb_rc_opts vb_rc_opts_of(const struct vb_rc_knobs *k, uint8_t rd)
{
	struct vb_rc_opts o = { .timeout = (uint8_t)k->timeout, .retry_cnt = (uint8_t)k->retry_cnt,
				.rnr_retry = (uint8_t)k->rnr_retry, .max_rd_atomic = rd };

	return o;
}

/* one RC (or UC) endpoint: PD, CQ, QP and one MR over the caller's buffer */
struct vb_rc {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint32_t psn;		/* our starting PSN (random) */
	uint32_t max_inline;
};

/* 0, or -errno with "dev: what failed: why" in err; on failure nothing is left */
int vb_rc_create(struct vb_rc *rc, const struct vb_dev *d, void *buf, size_t len, int access,
		 uint32_t send_wr, uint32_t recv_wr, char *err, size_t errlen);
/* the same with another connected QP type (IBV_QPT_UC) */
int vb_qp_create(struct vb_rc *rc, const struct vb_dev *d, enum ibv_qp_type type, void *buf,
		 size_t len, int access, uint32_t send_wr, uint32_t recv_wr, char *err,
		 size_t errlen);
void vb_rc_destroy(struct vb_rc *rc);
/* the endpoint record a peer needs, exposing [addr, addr + len) of the MR */
json_t *vb_rc_endpoint(const struct vb_rc *rc, const struct vb_dev *d, const void *addr,
		       uint64_t len);

#define VB_UD_QKEY 0x11111111u

/* UD: INIT (qkey) -> RTR -> RTS, and the address handle of the peer */
int vb_ud_connect(struct ibv_qp *qp, struct ibv_pd *pd, const struct vb_dev *d, uint32_t psn,
		  const struct vb_ep *remote, struct ibv_ah **ah);

/* RESET -> INIT -> RTR -> RTS for an RC or UC QP */
int vb_qp_connect(struct ibv_qp *qp, const struct vb_dev *d, uint32_t local_psn,
		  const struct vb_ep *remote, const struct vb_rc_opts *o);

#endif
