/* SPDX-License-Identifier: MIT */
/*
 * The one clock: CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads, so
 * that a workload's timestamps, the agent's deadlines, the injector's
 * windows and the controller's timers can be compared with each other.
 */
#ifndef RTB_CLOCK_H
#define RTB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t rtb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline double rtb_now_s(void)
{
	return (double)rtb_now_ns() / 1e9;
}

#endif
