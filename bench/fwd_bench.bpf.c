// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The forwarding bench's own programs (bench/forward.sh, fwd_bench.c):
 *   plain_fwd  plain XDP forwarding, the yardstick: every frame to the one
 *              port in plain_ports, no parsing, no rules
 *   gen_pass   XDP_PASS: a live frame handed to the stack (the bridge path)
 *   sink       on the far end of every path: counts and drops what arrives;
 *              a frame stamped by stamp gives its one-way time
 *   stamp      tc egress on the sending end: the time into the payload
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

/* where a stamp sits: Ethernet, IPv4, UDP, BTH, then the payload */
#define STAMP_OFF (14 + 20 + 8 + 12)
#define LAT_MAX 65536

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} plain_ports SEC(".maps");

/* the sink's one-way times (ns), in arrival order, and how many */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lat SEC(".maps");

__u64 sunk;	/* frames the sink saw */
__u32 nlat;	/* one-way times recorded */
__u64 magic;	/* a stamp's tag: set by user space, 0 = stamping off */

SEC("xdp")
int plain_fwd(struct xdp_md *ctx)
{
	(void)ctx;
	return bpf_redirect_map(&plain_ports, 0, 0);
}

SEC("xdp")
int gen_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("xdp")
int sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u64 *st = data + STAMP_OFF, now, *slot;
	__u32 i;

	__u8 *f = data;

	/* the bench's frames only (IPv4, UDP to 4791), not the links' own chatter */
	if ((void *)(f + 38) > end || f[12] != 0x08 || f[13] != 0 || f[23] != 17 || f[36] != 0x12 ||
	    f[37] != 0xb7)
		return XDP_DROP;
	__sync_fetch_and_add(&sunk, 1);
	if (!magic || (void *)(st + 2) > end || st[0] != magic)
		return XDP_DROP;
	now = bpf_ktime_get_ns();
	i = nlat++;	/* one stamped frame in flight at a time */
	slot = bpf_map_lookup_elem(&lat, &i);
	if (slot)
		*slot = now - st[1];
	return XDP_DROP;
}

SEC("tc")
int stamp(struct __sk_buff *skb)
{
	__u64 st[2] = { magic, 0 };

	if (!magic || skb->len < STAMP_OFF + sizeof(st))
		return TC_ACT_OK;
	st[1] = bpf_ktime_get_ns();
	bpf_skb_store_bytes(skb, STAMP_OFF, st, sizeof(st), 0);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
