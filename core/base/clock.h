/* SPDX-License-Identifier: MIT */
/* The one clock the library reads: CLOCK_MONOTONIC, as the samples are stamped. */
#ifndef PR_BASE_CLOCK_H
#define PR_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define PR_NS_PER_MS 1000000ull

static inline uint64_t pr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct timespec pr_ts_of_ms(uint32_t ms)
{
	return (struct timespec){ (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
}

#endif
