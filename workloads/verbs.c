// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "verbs.h"
#include "../lib/log.h"

static int gid_is_v4mapped(const union ibv_gid *g)
{
	static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pre, sizeof(pre));
}

/* rxe has 1024 GID slots per port; the IPv4 ones sit at the start, and a
 * full scan costs ~30 s under TCG: look at the first 16 only. */
#define GID_SCAN 16

static int find_roce_v2_ipv4(struct vb_dev *d)
{
	struct ibv_gid_entry e;
	int i;

	for (i = 0; i < GID_SCAN && i < 1024; i++) {
		if (ibv_query_gid_ex(d->ctx, d->port, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2 || !gid_is_v4mapped(&e.gid))
			continue;
		d->gid_index = i;
		d->gid = e.gid;
		return 0;
	}
	return -ENOENT;
}

int vb_dev_pick(uint8_t port, char *name, size_t len, int *nactive)
{
	struct ibv_device **list;
	int n, i, r = -ENODEV;

	*nactive = 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return -errno ? -errno : -ENODEV;
	for (i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_port_attr pa;

		if (!ctx)
			continue;
		if (!ibv_query_port(ctx, port, &pa) && pa.state == IBV_PORT_ACTIVE &&
		    pa.link_layer == IBV_LINK_LAYER_ETHERNET && ++*nactive == 1) {
			snprintf(name, len, "%s", ibv_get_device_name(list[i]));
			r = 0;
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return r;
}

int vb_dev_open(struct vb_dev *d, const char *name, uint8_t port, int gid_index, int wait_ms)
{
	struct ibv_device **list;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int n, i, r = -ENODEV, waited = 0;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list)
		return -errno ? -errno : -ENODEV;
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		d->ctx = ibv_open_device(list[i]);
		r = d->ctx ? 0 : (errno ? -errno : -ENODEV);
		break;
	}
	ibv_free_device_list(list);
	if (r)
		return r;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->port = port;
	if (ibv_query_device(d->ctx, &d->attr)) {
		r = -EIO;
		goto close_dev;
	}
	if (gid_index >= 0) {
		d->gid_index = gid_index;
		if (ibv_query_gid(d->ctx, port, gid_index, &d->gid)) {
			r = -EINVAL;
			goto close_dev;
		}
		return 0;
	}
	for (;;) {
		r = find_roce_v2_ipv4(d);
		if (!r || waited >= wait_ms)
			break;
		nanosleep(&ts, NULL);
		waited += 50;
	}
	if (r)
		goto close_dev;
	return 0;
close_dev:
	ibv_close_device(d->ctx);
	d->ctx = NULL;
	return r;
}

void vb_dev_close(struct vb_dev *d)
{
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->ctx = NULL;
}

int vb_port_query(const struct vb_dev *d, struct ibv_port_attr *pa)
{
	int r = ibv_query_port(d->ctx, d->port, pa);

	return r > 0 ? -r : r;
}

const char *vb_port_state_name(enum ibv_port_state st)
{
	switch (st) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	default: return "UNKNOWN";
	}
}

void vb_gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len);
}

int vb_gid_parse(const char *s, union ibv_gid *g)
{
	return inet_pton(AF_INET6, s, g->raw) == 1 ? 0 : -EINVAL;
}

void vb_gid_ipv4(const union ibv_gid *g, char *buf, size_t len)
{
	if (!gid_is_v4mapped(g) || len < INET_ADDRSTRLEN) {
		if (len)
			buf[0] = 0;
		return;
	}
	inet_ntop(AF_INET, g->raw + 12, buf, (socklen_t)len);
}

json_t *vb_ep_to_json(const struct vb_ep *ep)
{
	char gid[INET6_ADDRSTRLEN];

	vb_gid_str(&ep->gid, gid, sizeof(gid));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:s,s:i}", "qpn", (json_int_t)ep->qpn, "psn",
			 (json_int_t)ep->psn, "rkey", (json_int_t)ep->rkey, "addr",
			 (json_int_t)ep->addr, "len", (json_int_t)ep->len, "gid", gid, "mtu",
			 128 << ep->mtu);
}

int vb_ep_from_json(struct vb_ep *ep, const json_t *j)
{
	json_int_t qpn, psn, rkey, addr, len;
	const char *gid;
	int mtu;

	memset(ep, 0, sizeof(*ep));
	if (json_unpack((json_t *)j, "{s:I,s:I,s:I,s:I,s:I,s:s,s:i}", "qpn", &qpn, "psn", &psn,
			"rkey", &rkey, "addr", &addr, "len", &len, "gid", &gid, "mtu", &mtu))
		return -EINVAL;
	if (qpn < 0 || qpn > 0xffffff || psn < 0 || psn > 0xffffff || rkey < 0 ||
	    rkey > 0xffffffffLL || len < 0 || vb_gid_parse(gid, &ep->gid))
		return -EINVAL;
	switch (mtu) {
	case 256: ep->mtu = IBV_MTU_256; break;
	case 512: ep->mtu = IBV_MTU_512; break;
	case 1024: ep->mtu = IBV_MTU_1024; break;
	case 2048: ep->mtu = IBV_MTU_2048; break;
	case 4096: ep->mtu = IBV_MTU_4096; break;
	default: return -EINVAL;
	}
	ep->qpn = (uint32_t)qpn;
	ep->psn = (uint32_t)psn;
	ep->rkey = (uint32_t)rkey;
	ep->addr = (uint64_t)addr;
	ep->len = (uint64_t)len;
	return 0;
}

int vb_qp_connect(struct ibv_qp *qp, const struct vb_dev *d, uint32_t local_psn,
		  const struct vb_ep *remote, const struct vb_rc_opts *o)
{
	int rc_qp = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a;
	int r, mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = d->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE |
			    (rc_qp ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r) {
		log_err("qp 0x%x: failed to move to INIT: %s", qp->qp_num, strerror(r));
		return -r;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = remote->mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = remote->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = d->port;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (rc_qp) {
		a.max_dest_rd_atomic = o->max_rd_atomic;
		a.min_rnr_timer = o->min_rnr_timer ? o->min_rnr_timer : 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	r = ibv_modify_qp(qp, &a, mask);
	if (r) {
		log_err("qp 0x%x: failed to move to RTR: %s", qp->qp_num, strerror(r));
		return -r;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = local_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc_qp) {
		a.timeout = o->timeout;
		a.retry_cnt = o->retry_cnt;
		a.rnr_retry = o->rnr_retry;
		a.max_rd_atomic = o->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	r = ibv_modify_qp(qp, &a, mask);
	if (r) {
		log_err("qp 0x%x: failed to move to RTS: %s", qp->qp_num, strerror(r));
		return -r;
	}
	return 0;
}

void vb_rc_destroy(struct vb_rc *rc)
{
	if (rc->qp)
		ibv_destroy_qp(rc->qp);
	if (rc->mr)
		ibv_dereg_mr(rc->mr);
	if (rc->cq)
		ibv_destroy_cq(rc->cq);
	if (rc->pd)
		ibv_dealloc_pd(rc->pd);
	memset(rc, 0, sizeof(*rc));
}

int vb_rc_create(struct vb_rc *rc, const struct vb_dev *d, void *buf, size_t len, int access,
		 uint32_t send_wr, uint32_t recv_wr, char *err, size_t errlen)
{
	return vb_qp_create(rc, d, IBV_QPT_RC, buf, len, access, send_wr, recv_wr, err, errlen);
}

int vb_qp_create(struct vb_rc *rc, const struct vb_dev *d, enum ibv_qp_type type, void *buf,
		 size_t len, int access, uint32_t send_wr, uint32_t recv_wr, char *err,
		 size_t errlen)
{
	struct ibv_qp_init_attr qia = { 0 };
	const char *what;
	int r;

	memset(rc, 0, sizeof(*rc));
	what = "allocate a PD";
	rc->pd = ibv_alloc_pd(d->ctx);
	if (!rc->pd)
		goto fail;
	what = "create a CQ";
	rc->cq = ibv_create_cq(d->ctx, (int)(send_wr + recv_wr + 16), NULL, NULL, 0);
	if (!rc->cq)
		goto fail;
	what = "register memory";
	rc->mr = ibv_reg_mr(rc->pd, buf, len, access);
	if (!rc->mr)
		goto fail;
	qia.send_cq = rc->cq;
	qia.recv_cq = rc->cq;
	qia.qp_type = type;
	qia.cap.max_send_wr = send_wr;
	qia.cap.max_recv_wr = recv_wr;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = 236;	/* perftest's default; rxe may offer none */
	what = type == IBV_QPT_UD ? "create a UD QP" :
	       type == IBV_QPT_UC ? "create a UC QP" : "create an RC QP";
	rc->qp = ibv_create_qp(rc->pd, &qia);
	if (!rc->qp) {
		qia.cap.max_inline_data = 0;
		rc->qp = ibv_create_qp(rc->pd, &qia);
	}
	if (!rc->qp)
		goto fail;
	rc->max_inline = qia.cap.max_inline_data;
	if (getrandom(&rc->psn, sizeof(rc->psn), 0) != sizeof(rc->psn))
		rc->psn = (uint32_t)time(NULL);
	rc->psn &= 0xffffff;
	return 0;
fail:
	r = errno ? -errno : -ENOMEM;
	snprintf(err, errlen, "%s: failed to %s (%zu bytes): %s", d->name, what, len, strerror(-r));
	vb_rc_destroy(rc);
	return r;
}

json_t *vb_rc_endpoint(const struct vb_rc *rc, const struct vb_dev *d, const void *addr,
		       uint64_t len)
{
	struct ibv_port_attr pa;
	struct vb_ep me = { 0 };

	if (vb_port_query(d, &pa))
		return NULL;
	me.qpn = rc->qp->qp_num;
	me.psn = rc->psn;
	me.rkey = rc->mr->rkey;
	me.addr = (uint64_t)(uintptr_t)addr;
	me.len = len;
	me.gid = d->gid;
	me.mtu = pa.active_mtu;
	return vb_ep_to_json(&me);
}

int vb_ud_connect(struct ibv_qp *qp, struct ibv_pd *pd, const struct vb_dev *d, uint32_t psn,
		  const struct vb_ep *remote, struct ibv_ah **ah)
{
	struct ibv_ah_attr aa = { 0 };
	struct ibv_qp_attr a = { 0 };
	int r;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = d->port;
	a.qkey = VB_UD_QKEY;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (!r) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		r = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (!r) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = psn;
		r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (r) {
		log_err("qp 0x%x: UD state change failed: %s", qp->qp_num, strerror(r));
		return -r;
	}
	aa.is_global = 1;
	aa.grh.dgid = remote->gid;
	aa.grh.sgid_index = (uint8_t)d->gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = d->port;
	*ah = ibv_create_ah(pd, &aa);
	return *ah ? 0 : (errno ? -errno : -EINVAL);
}
