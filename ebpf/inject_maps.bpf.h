/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tc program's maps (inject_abi.h says what each holds), pinned and
 * shared by every hook, and the per-CPU scratch its callbacks use.
 * Part of inject.bpf.c, the one program: included there, nowhere else.
 */
#ifndef RTB_INJECT_MAPS_BPF_H
#define RTB_INJECT_MAPS_BPF_H

/* set between open and load */
const volatile __u32 inj_dir = INJ_DIR_INGRESS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_state SEC(".maps");

/* rule id -> the deadline of its lease (bpf_ktime_get_ns); the agent that
 * owns the rule pushes it on while it lives (injector/inj.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_leases SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule_ctr);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rule_ctrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook_ctr);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_ctrs SEC(".maps");

/* candidate masks: hook -> rules (+ its counter slot), class -> rules, exact QPN -> rules */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hooks SEC(".maps");

/* the program's way to a hook (inject_abi.h): bucket -> slot -> hook */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_HOOK_BUCKETS);
	__type(key, __u32);
	__type(value, struct inj_hook_bucket);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_idx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_slots SEC(".maps");

/* the rule index's radix and interval tables, two sets each (inject_abi.h) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * INJ_F_RADIX);
	__type(key, __u32);
	__type(value, struct inj_rtab);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rtabs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * INJ_F_MAX);
	__type(key, __u32);
	__type(value, struct inj_itab);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_itabs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_CLS_ALL);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_class_mask SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_QPN_BUCKETS);
	__type(key, __u32);
	__type(value, struct inj_qpn_bucket);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qpn_mask SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inj_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_cfg SEC(".maps");

/* user space bookkeeping: ifindex -> INJ_OWN_* (qdiscs to remove on flush) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_owned SEC(".maps");

/* the trace (inject_abi.h): one ring for every hook, read by one rdma-inject */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, INJ_TRACE_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_trace SEC(".maps");

struct trace_buf {
	struct inj_trace_hdr h;
	__u8 data[INJ_TRACE_SNAP_MAX];
};

/* tracking (inject_abi.h): the QPs a hook saw, their PSNs' transmissions,
 * each hook's next QP index (by its counter slot), the switch by hand */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_QP_MAX);
	__type(key, struct inj_qp_key);
	__type(value, struct inj_qp);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_TX_MAX);
	__type(key, struct inj_tx_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_qp_next);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qp_next SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_track SEC(".maps");

/* a record is built here, then copied into the ring at its real size */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} inj_trace_scratch SEC(".maps");

/* CNPs (inject_abi.h): requests' destination QPNs by PSN, QPs' peers */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_PEER_MAX);
	__type(key, struct inj_peer_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_PEER_MAX);
	__type(key, struct inj_peer_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_peers SEC(".maps");

/* a CNP is built here (at most 18 + 40 + 8 + 12 + 16 + 4 bytes), with
 * the CNP callbacks' variables */
struct cnp_buf {
	__u8 b[128];
	__u8 m[128];	/* the ICRC's input */
	__u8 t[16];
	struct inj_peer_key k;
	__u32 qpn, peer, hk, ip_off, l3, end, crc;
	__u16 ck;
};

static const __u32 inj_zero = 0;

/* track()'s template of a new QP entry (its window never written: zeros) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inj_qp);
} inj_qp_fresh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cnp_buf);
} inj_cnp_scratch SEC(".maps");

struct prng {
	__u64 s;
	__u32 gen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prng);
} inj_prng SEC(".maps");

#endif
