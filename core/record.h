/* SPDX-License-Identifier: MIT */
/* Pure decoding: record bytes + sample_type -> struct perfring_sample/record. */
#ifndef PR_RECORD_H
#define PR_RECORD_H

#include <perfring/perfring.h>
#include <stdbool.h>

/* The sample_type bits the decoder understands. */
#define PR_SAMPLE_SUPPORTED                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |  \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* Bits forced on every event so records of one ring can be told apart and timed. */
#define PR_SAMPLE_FORCED                                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* Name of the lowest unsupported bit in sample_type, or NULL if all are. */
const char *pr_sample_unsupported(uint64_t sample_type);

/* The IDENTIFIER of a record: first u64 of a SAMPLE, last u64 of any other
 * record (sample_id_all). false if the record is too short to hold it. */
bool pr_record_identifier(const struct perf_event_header *h, uint64_t *id);

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
