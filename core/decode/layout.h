/* SPDX-License-Identifier: MIT */
/* What record.c (the sample walker) and profile.c (the profiler's parts it
 * calls) share: the sample_type masks, an event's layout, loads and a
 * bounds-checked cursor over one record. */
#ifndef PR_LAYOUT_H
#define PR_LAYOUT_H

#include <perfring/perfring.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The sample_type bits the decoder understands. */
#define PR_SAMPLE_SUPPORTED                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |  \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* The profiler's sample_type bits (decode/profile.c): variable-size parts
 * sized by attr fields beyond sample_type, decoded after the fixed fields. */
#define PR_SAMPLE_PROFILE                                                            \
	(PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |          \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |      \
	 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |       \
	 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |      \
	 PERF_SAMPLE_CODE_PAGE_SIZE)

/* Bits forced on every event so records of one ring can be told apart and timed. */
#define PR_SAMPLE_FORCED                                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

#define PR_SAMPLE_TRACEPOINT (PR_SAMPLE_FORCED | PERF_SAMPLE_RAW)

/* Sample types decoded with constant offsets: the forced fields alone, or
 * with RAW (a tracepoint). By far the most common samples. */
enum pr_shape { PR_SHAPE_ANY, PR_SHAPE_FORCED, PR_SHAPE_TRACEPOINT };

/* A pr_sbuf's view of a general layout with the profiler's parts: the only
 * decode that leaves them non-zero (a pr_layout's sb_shape, not its shape). */
#define PR_SB_PROFILE 3

static inline enum pr_shape pr_shape_of(uint64_t sample_type)
{
	if (sample_type == PR_SAMPLE_FORCED)
		return PR_SHAPE_FORCED;
	return sample_type == PR_SAMPLE_TRACEPOINT ? PR_SHAPE_TRACEPOINT : PR_SHAPE_ANY;
}

/* Where each fixed-size field of a sample sits, worked out once per event
 * from its sample_type so the per-record decode is loads, not a walk.
 * Offsets are from the end of the header; -1 = absent. */
struct pr_layout {
	uint64_t sample_type;
	uint16_t fixed;         /* bytes of the fixed-size fields */
	uint8_t shape;          /* enum pr_shape */
	int16_t id, ip, tid, time, addr, stream_id, cpu, period;
	/* What sizes the profiler's parts (pr_layout_profile; 0 without them). */
	uint8_t sb_shape;       /* shape, or PR_SB_PROFILE with them (read/fast.h) */
	uint64_t read_format;
	uint8_t regs_user_nr, regs_intr_nr;
	bool branch_hw_index;
};

static inline uint64_t pr_ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t pr_ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t pr_opt64(const uint8_t *b, int16_t off)
{
	return off >= 0 ? pr_ld64(b + off) : 0;
}

/* A bounds-checked cursor over what is left of one record's body. */
struct pr_cur {
	const uint8_t *p, *end;
};

static inline size_t pr_cur_words(const struct pr_cur *c)
{
	return (size_t)(c->end - c->p) / sizeof(uint64_t);
}

static inline bool pr_cur_take(struct pr_cur *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static inline bool pr_cur_u64(struct pr_cur *c, uint64_t *v)
{
	return pr_cur_take(c, v, sizeof(*v));
}

#endif
