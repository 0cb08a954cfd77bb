/* SPDX-License-Identifier: MIT */
/*
 * Synthetic perf rings in ordinary memory, and encoders for the records the
 * kernel writes into them. Used by the unit tests, the benchmarks and the
 * fuzz corpus generator; free of any test framework.
 *
 * Encoders write into a caller's buffer and return the record's length in
 * bytes, or 0 when it does not fit in cap or in the u16 header size. Fields
 * are written in the kernel's order for the given sample_type.
 */
#ifndef PR_TESTS_SYNTH_H
#define PR_TESTS_SYNTH_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/ring.h"

#define SYNTH_REC_MAX 65528u /* largest 8-byte aligned u16 record size */

/* The sample_id_all trailer bits, in the order the kernel writes them. */
#define SYNTH_TRAILER_BITS                                                           \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |   \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct synth_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;
	uint8_t *scratch; /* PR_RING_SCRATCH bytes */
	struct pr_ring ring;
};

/* Values of a SAMPLE record, or of a sample_id_all trailer (which uses pid,
 * tid, time, id, stream_id, cpu, res and identifier). */
struct synth_fields {
	uint16_t misc;
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id, stream_id;
	uint32_t cpu, res;
	uint64_t period;
	const uint64_t *callchain;
	uint64_t callchain_nr;
	const void *raw;   /* raw_size bytes, zero-padded so 4 + size is 8-aligned */
	uint32_t raw_size;
};

struct synth_mmap2 {
	uint16_t misc;     /* PERF_RECORD_MISC_MMAP_BUILD_ID is added when build_id */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	const uint8_t *build_id; /* non-NULL: the build-id variant */
	uint8_t build_id_size;   /* at most 20 */
	uint32_t prot, flags;
	const char *filename;
};

/* Heap meta page, data area (size: power of two >= 8) and scratch; head and
 * tail at 0; sr->ring initialised on them. 0, -EINVAL or -ENOMEM. */
int synth_ring_init(struct synth_ring *sr, uint64_t size);
void synth_ring_free(struct synth_ring *sr);

/* Puts head and tail (shared and local) at pos, e.g. just before the wrap. */
int synth_ring_set_pos(struct synth_ring *sr, uint64_t pos);

uint64_t synth_head(const struct synth_ring *sr);
/* Moves data_head without writing, e.g. to fake an overrun. */
void synth_set_head(struct synth_ring *sr, uint64_t head);

/* Copies len bytes to ring position pos (wrapping), not touching head. */
void synth_write(struct synth_ring *sr, uint64_t pos, const void *buf, size_t len);

/* Appends bytes at head, wrapping, and release-stores the new head.
 * -ENOSPC if that would overwrite bytes not yet released by data_tail. */
int synth_put(struct synth_ring *sr, const void *rec, size_t len);

/* Appends the same record n times; returns how many fitted. */
size_t synth_put_n(struct synth_ring *sr, const void *rec, size_t len, size_t n);

size_t synth_trailer_size(uint64_t sample_type);

size_t synth_sample(uint8_t *buf, size_t cap, uint64_t sample_type,
		    const struct synth_fields *f);

/* The profiler's parts of a sample, as the kernel writes them. */
struct synth_prof {
	const uint64_t *read;      /* the struct read_format, read_words u64s */
	size_t read_words;
	const struct perf_branch_entry *br;
	uint64_t br_nr, hw_idx;    /* hw_idx with branch_sample_type HW_INDEX */
	uint64_t regs_user_abi;    /* 0: no registers follow */
	const uint64_t *regs_user; /* popcount(sample_regs_user) of them */
	const uint8_t *stack;      /* stack_size bytes; size 0: a lone size */
	uint64_t stack_size, stack_dyn;
	uint64_t weight, data_src, transaction;
	uint64_t regs_intr_abi;
	const uint64_t *regs_intr;
	uint64_t phys_addr, cgroup, data_page_size, code_page_size;
};

/* A sample of attr's sample_type, its parts sized by attr. */
size_t synth_sample_prof(uint8_t *buf, size_t cap, const struct perf_event_attr *attr,
			 const struct synth_fields *f, const struct synth_prof *p);

/* Header, body (zero-padded to 8) and the sample_id_all trailer (from
 * trailer, or zeros when it is NULL). */
size_t synth_record(uint8_t *buf, size_t cap, uint32_t type, uint16_t misc, const void *body,
		    size_t body_len, uint64_t sample_type, const struct synth_fields *trailer);

size_t synth_lost(uint8_t *buf, size_t cap, uint64_t id, uint64_t lost, uint64_t sample_type,
		  const struct synth_fields *trailer);
size_t synth_lost_samples(uint8_t *buf, size_t cap, uint64_t lost, uint64_t sample_type,
			  const struct synth_fields *trailer);
size_t synth_comm(uint8_t *buf, size_t cap, uint32_t pid, uint32_t tid, const char *comm,
		  bool exec, uint64_t sample_type, const struct synth_fields *trailer);
size_t synth_mmap2(uint8_t *buf, size_t cap, const struct synth_mmap2 *m, uint64_t sample_type,
		   const struct synth_fields *trailer);
/* type: PERF_RECORD_FORK or PERF_RECORD_EXIT */
size_t synth_task(uint8_t *buf, size_t cap, uint32_t type, uint32_t pid, uint32_t ppid,
		  uint32_t tid, uint32_t ptid, uint64_t time, uint64_t sample_type,
		  const struct synth_fields *trailer);
/* type: PERF_RECORD_THROTTLE or PERF_RECORD_UNTHROTTLE */
size_t synth_throttle(uint8_t *buf, size_t cap, uint32_t type, uint64_t time, uint64_t id,
		      uint64_t stream_id, uint64_t sample_type, const struct synth_fields *trailer);
size_t synth_switch(uint8_t *buf, size_t cap, uint16_t misc, uint64_t sample_type,
		    const struct synth_fields *trailer);
size_t synth_switch_cpu_wide(uint8_t *buf, size_t cap, uint16_t misc, uint32_t next_prev_pid,
			     uint32_t next_prev_tid, uint64_t sample_type,
			     const struct synth_fields *trailer);

#endif
