/* SPDX-License-Identifier: MIT */
/* A BPF ring buffer as a source of samples (layer 4, "one ring"): its records
 * to its event's callback, by a drain of its own or one record at a time for
 * a merge. Knows the event registry, never the session. */
#ifndef PR_READ_RINGBUF_H
#define PR_READ_RINGBUF_H

#include "event.h"
#include "kernel/ringbuf.h"

#include <perfring/bpf.h>
#include <stdbool.h>
#include <stddef.h>

struct pr_rbuf {
	struct pr_rb_map map;
	struct perfring_event *ev;   /* whose callback gets the samples */
	int map_fd;                  /* the session's own dup */
	bool timed;
	uint32_t time_offset;
	struct perfring_ringbuf_stats st;   /* <perfring/bpf.h>; R8: read with
	                                       pr_rbuf_stats_read */
	bool busy;                   /* R1: a parse holds it (same rule as a pr_cpu's) */
	int err;                     /* -EIO once the ring was found corrupt: it is
	                                read no more (sticky) */
	/* The merge's face: the record a peek found, for deliver. */
	const void *rec;
	uint32_t len;
	bool peeked;
	uint64_t pass;               /* records delivered since the last end */
};

/* R1 (docs/RULES.md): one parse of a ring buffer at a time. A merge claims
 * each ring buffer it reads before its first peek and unclaims it after its
 * end; pr_rbuf_drain claims by itself. false: another parse holds it. */
bool pr_rbuf_claim(struct pr_rbuf *rb);
void pr_rbuf_unclaim(struct pr_rbuf *rb);

/* Delivers up to max records (0 = all) to ev's callback, then commits and
 * rechecks (records that arrived meanwhile are drained too, within max).
 * *more (may be NULL): a record is left (budget, or a callback stopped).
 * *stopped (may be NULL): a callback asked to stop. Returns records
 * delivered, -EBUSY (R1) with nothing done, or -EIO (corrupt ring: stops
 * reading it, the sentence in ev's registry's buffer; records before the bad
 * header were delivered and counted). Each record is a struct
 * perfring_sample: raw/raw_size the record, cpu -1, pid/tid 0, time the u64
 * at time_offset when timed (0 and st.untimed++ if too short). After a
 * callback asked to stop nothing more is delivered, but rb is still touched
 * (commit, stats): R7's deferred free keeps it alive until the parse ends. */
int pr_rbuf_drain(struct pr_rbuf *rb, size_t max, bool *more, bool *stopped);

/* The merge's face (rb claimed by the merge): whether a record is next and
 * its time (0 when untimed or too short). false also for a corrupt ring
 * (rb->err is then -EIO) ... */
bool pr_rbuf_peek(struct pr_rbuf *rb, uint64_t *time);
/* ... that record to the callback (after a peek that returned true): the
 * callback's verdict as pr_rbuf_drain counts it (1 delivered, 0 filtered: no
 * record was peeked, <0 stop: delivered and counted, and the callback asked to
 * stop) ... */
int pr_rbuf_deliver(struct pr_rbuf *rb);
/* ... and the end of a merged pass over it: commit and recheck (true: records
 * arrived, the reader must pass again before going back to its loop). */
bool pr_rbuf_end(struct pr_rbuf *rb);

/* A copy of rb's stats, each counter whole (R8: from any thread). */
void pr_rbuf_stats_read(const struct pr_rbuf *rb, struct perfring_ringbuf_stats *out);

#endif
