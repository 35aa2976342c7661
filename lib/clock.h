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

/* *ts: s seconds from now on CLOCK_MONOTONIC, for a timed wait on a
 * condition variable made with that clock */
static inline void rtb_deadline(struct timespec *ts, double s)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)s;
	ts->tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

#endif
