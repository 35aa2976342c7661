// SPDX-License-Identifier: MIT
/*
 * The trace ring's reader (inj.h inj_ring_*): the BPF ring buffer read
 * through its own mapping, as libbpf's ring_buffer does, but for what the
 * programs feel. libbpf (1.1, Debian 12's) stores the consumer position
 * after every record and reads the producer's after every pass, and its
 * reader wakes whenever a record waits: each read and store takes a cache
 * line away from the CPU that writes the next record (~100 ns a record
 * here). This reader passes once up to where the producer was, stores its
 * position once, and passes only when the program wakes it (a quarter of
 * the ring waiting, edge-triggered) or its caller's timeout (20 ms) ran
 * out. The layout is the kernel's: the consumer position on the first
 * page (read-write), the producer position on the next, then the data,
 * mapped twice so that a record that wraps reads as one. A record's 8-byte
 * header holds its length with the busy and discard bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "injector/inj.h"

struct inj_ring {
	int (*cb)(void *ctx, void *data, size_t len);
	void *ctx;
	unsigned long *cons_pos;
	const unsigned long *prod_pos;
	const unsigned char *data;
	size_t mask, page, size;
	int epfd;
};

struct inj_ring *inj_ring_new(int map_fd, int (*cb)(void *ctx, void *data, size_t len), void *ctx)
{
	struct bpf_map_info info = { 0 };
	uint32_t ilen = sizeof(info);
	/* edge-triggered: woken when the program wakes it (a quarter of the
	 * ring waiting), not whenever a record is there */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct inj_ring *r;
	void *p;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &ilen))
		return NULL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cb = cb;
	r->ctx = ctx;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	r->mask = r->size - 1;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		p = NULL;
	r->cons_pos = p;
	p = r->cons_pos ? mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, map_fd,
			       (off_t)r->page) :
			  MAP_FAILED;
	if (p != MAP_FAILED) {
		r->prod_pos = p;
		r->data = (const unsigned char *)p + r->page;
	}
	if (r->epfd < 0 || !r->prod_pos || epoll_ctl(r->epfd, EPOLL_CTL_ADD, map_fd, &ev)) {
		int e = errno;

		inj_ring_free(r);
		errno = e;
		return NULL;
	}
	return r;
}

int inj_ring_consume(struct inj_ring *r)
{
	unsigned long cons = __atomic_load_n(r->cons_pos, __ATOMIC_ACQUIRE), start = cons;
	unsigned long prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
	int n = 0;

	/* one pass, up to where the producer was: a reader that chased it
	 * would read its position (and move its own) every few records */
	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
		uint32_t raw = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), len;

		if (raw & BPF_RINGBUF_BUSY_BIT)	/* still being written */
			break;
		len = raw & ~(uint32_t)BPF_RINGBUF_DISCARD_BIT;
		if (!(raw & BPF_RINGBUF_DISCARD_BIT)) {
			int e = r->cb(r->ctx, (void *)(hdr + 2), len);

			if (e < 0) {
				__atomic_store_n(r->cons_pos, cons, __ATOMIC_RELEASE);
				return e;
			}
			n++;
		}
		cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
	}
	if (cons != start)	/* once: the producer's line left alone meanwhile */
		__atomic_store_n(r->cons_pos, cons, __ATOMIC_RELEASE);
	return n;
}

int inj_ring_poll(struct inj_ring *r, int timeout_ms)
{
	struct epoll_event ev;

	if (epoll_wait(r->epfd, &ev, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return inj_ring_consume(r);
}

void inj_ring_free(struct inj_ring *r)
{
	if (!r)
		return;
	if (r->prod_pos)
		munmap((void *)r->prod_pos, r->page + 2 * r->size);
	if (r->cons_pos)
		munmap(r->cons_pos, r->page);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r);
}
