/* SPDX-License-Identifier: MIT */
/* Pure decoding: record bytes + sample_type -> struct perfring_sample/record. */
#ifndef PR_RECORD_H
#define PR_RECORD_H

#include "decode/layout.h"
#include "decode/profile.h"

#include <perfring/perfring.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Name of the lowest unsupported bit in sample_type, or NULL if all are. */
const char *pr_sample_unsupported(uint64_t sample_type);

/* The IDENTIFIER of a record: first u64 of a SAMPLE, last u64 of any other
 * record (sample_id_all). false if the record is too short to hold it. */
bool pr_record_identifier(const struct perf_event_header *h, uint64_t *id);

/* l for sample_type: its fixed fields' offsets and shape (decode/layout.h). */
void pr_layout_init(struct pr_layout *l, uint64_t sample_type);

/* Zeroes the profiler's fields of out (a sample without them), in 16-byte
 * stores: gcc makes a memset of this size a rep stos, which costs more. */
static inline void pr_profile_zero(struct perfring_sample *out)
{
	typedef uint64_t pr_v16 __attribute__((vector_size(16), aligned(8), may_alias));
	enum { N = sizeof(*out) - offsetof(struct perfring_sample, read) };
	char *p = (char *)&out->read;

	_Static_assert(N % 16 == 0, "the profiler's fields are whole 16-byte stores");
#pragma GCC unroll 16
	for (size_t i = 0; i < N; i += 16)
		*(pr_v16 *)(p + i) = (pr_v16){ 0, 0 };
}

/* A sample decoded with the layout of attr (tests, fuzzing). */
int pr_decode_sample_attr(const struct perf_event_header *h, const struct perf_event_attr *attr,
			  struct perfring_sample *out);

/* What follows the fixed fields: CALLCHAIN and RAW, and with a
 * PR_SAMPLE_PROFILE bit the profiler's parts around them, in order. */
int pr_decode_sample_rest(const uint8_t *p, const uint8_t *end, const struct pr_layout *l,
			  struct perfring_sample *out);

/* The bytes of a fixed-shape sample before its RAW payload: header,
 * IDENTIFIER, TID, TIME, CPU (and RAW's u32 size for a tracepoint). */
static inline uint32_t pr_shape_min(enum pr_shape shape)
{
	return shape == PR_SHAPE_TRACEPOINT ? sizeof(struct perf_event_header) + 36
					    : sizeof(struct perf_event_header) + 32;
}

/* What a sample of a fixed shape carries, but for its id (IDENTIFIER):
 * TID's pid and tid as the sample has them side by side, time, cpu, and a
 * tracepoint's RAW. */
struct pr_fixed {
	uint64_t pid_tid, time;
	uint32_t cpu, raw_size;
	const void *raw;
};

/* Reads f from a record the caller has checked to hold pr_shape_min(shape)
 * bytes; a tracepoint's payload must fit in raw_room, the bytes after that
 * minimum. (A loop over samples of one id, which it checks, has the id.) */
static inline int pr_fixed_read(const struct perf_event_header *h, enum pr_shape shape,
				uint32_t raw_room, struct pr_fixed *f)
{
	const uint8_t *b = (const uint8_t *)(h + 1);

	f->raw = NULL;
	f->raw_size = 0;
	if (shape == PR_SHAPE_TRACEPOINT) {
		f->raw_size = pr_ld32(b + 32);
		if (f->raw_size > raw_room)
			return -EBADMSG;
		f->raw = b + 36;
	}
	f->pid_tid = pr_ld64(b + 8);
	f->time = pr_ld64(b + 16);
	f->cpu = pr_ld32(b + 24);
	return 0;
}

/* Writes only what a sample of a fixed shape carries, but for its id:
 * record, pid, tid, time, cpu, and raw for a tracepoint (pr_fixed_read). */
static inline int pr_decode_fixed_but_id(const struct perf_event_header *h, enum pr_shape shape,
					 uint32_t raw_room, struct perfring_sample *out)
{
	struct pr_fixed f;

	_Static_assert(offsetof(struct perfring_sample, tid) ==
		       offsetof(struct perfring_sample, pid) + 4, "pid and tid side by side");
	if (pr_fixed_read(h, shape, raw_room, &f))
		return -EBADMSG;
	if (shape == PR_SHAPE_TRACEPOINT) {
		out->raw = f.raw;
		out->raw_size = f.raw_size;
	}
	out->record = h;
	memcpy(&out->pid, &f.pid_tid, sizeof(f.pid_tid));
	out->time = f.time;
	out->cpu = (int)f.cpu;
	return 0;
}

/* pr_decode_fixed_but_id, and the id. */
static inline int pr_decode_fixed(const struct perf_event_header *h, enum pr_shape shape,
				  uint32_t raw_room, struct perfring_sample *out)
{
	out->id = pr_ld64((const uint8_t *)(h + 1));
	return pr_decode_fixed_but_id(h, shape, raw_room, out);
}

/* pr_decode_fixed for a record of any size. The caller zeroes the other
 * fields (once, for a loop that reuses out). */
static inline int pr_decode_shaped(const struct perf_event_header *h, enum pr_shape shape,
				   struct perfring_sample *out)
{
	if (h->size < pr_shape_min(shape))
		return -EBADMSG;
	return pr_decode_fixed(h, shape, h->size - pr_shape_min(shape), out);
}

/* The per-record decode of a PERF_RECORD_SAMPLE laid out by l into a
 * pr_sbuf (read/fast.h): the profiler's fields are left alone unless l has
 * them, because the sbuf zeroes them when its last event had them. */
static inline int pr_decode_sample_sb(const struct perf_event_header *h,
				      const struct pr_layout *l, struct perfring_sample *out)
{
	const uint8_t *b = (const uint8_t *)(h + 1);

	out->ip = out->addr = out->stream_id = out->period = 0;
	out->callchain = NULL;
	out->callchain_nr = 0;
	out->raw = NULL;
	out->raw_size = 0;
	if (l->shape != PR_SHAPE_ANY)
		return pr_decode_shaped(h, (enum pr_shape)l->shape, out);
	if (h->size < sizeof(*h) + l->fixed)
		return -EBADMSG;
	out->record = h;
	out->id = pr_opt64(b, l->id);
	out->ip = pr_opt64(b, l->ip);
	out->pid = l->tid >= 0 ? pr_ld32(b + l->tid) : 0;
	out->tid = l->tid >= 0 ? pr_ld32(b + l->tid + 4) : 0;
	out->time = pr_opt64(b, l->time);
	out->addr = pr_opt64(b, l->addr);
	out->stream_id = pr_opt64(b, l->stream_id);
	out->period = pr_opt64(b, l->period);
	if (l->cpu >= 0)
		out->cpu = (int)pr_ld32(b + l->cpu);
	if (!(l->sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PR_SAMPLE_PROFILE)))
		return 0;
	return pr_decode_sample_rest(b + l->fixed, (const uint8_t *)h + h->size, l, out);
}

/* The per-record decode of a PERF_RECORD_SAMPLE laid out by l into a struct
 * that may hold anything: writes every field. */
static inline int pr_decode_sample_fast(const struct perf_event_header *h,
					const struct pr_layout *l, struct perfring_sample *out)
{
	if (!(l->sample_type & PR_SAMPLE_PROFILE))
		pr_profile_zero(out);
	return pr_decode_sample_sb(h, l, out);
}

/* Decodes a PERF_RECORD_SAMPLE. Leaves out->event alone, and out->cpu too
 * unless sample_type has PERF_SAMPLE_CPU.
 * Returns 0, or -EBADMSG if a field runs past the record's end. */
int pr_decode_sample(const struct perf_event_header *h, uint64_t sample_type,
		     struct perfring_sample *out);

/* Decodes a non-sample record and its sample_id_all trailer (laid out by
 * sample_type). Leaves out->event and out->cpu alone. Returns 0, -EBADMSG if
 * malformed, -ENOMSG for a type it does not decode (skipped and counted). */
int pr_decode_record(const struct perf_event_header *h, uint64_t sample_type,
		     struct perfring_record *out);

/* The record's timestamp for the merge, 0 when it has none. */
uint64_t pr_record_time(const struct perf_event_header *h, uint64_t sample_type);

#endif
