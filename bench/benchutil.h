/* SPDX-License-Identifier: MIT */
/*
 * Shared by the synthetic benchmarks: a started session whose per-CPU rings
 * are synthetic rings in ordinary memory, timing, and the report writer.
 * Reaches the library's internals (link core/libperfring-core.la).
 */
#ifndef PR_BENCH_BENCHUTIL_H
#define PR_BENCH_BENCHUTIL_H

#include "session.h"
#include "synth.h" /* tests/: -I$(top_srcdir)/tests */

#include <perfring/perfring.h>
#include <stdio.h>

/*
 * A session that looks started to every parse entry point (parse_for_cpu,
 * the pull form, parse_all) but reads K synthetic rings instead of kernel
 * mmaps. No fd is opened and nothing is mapped.
 *
 * Ring i is s->cpu[i], with the fake CPU number i (CPU numbers need not be
 * online: only pr_cpu_index() looks at them, and they are sorted). Its id
 * table holds two ids, as a real CPU's does: bench_leader_id(i) for the dummy
 * leader (NULL event) and bench_event_id(i) for the one event, which every
 * ring shares.
 *
 * Ownership: the session owns the event (added with add_attr, so its
 * sample_type carries the forced bits), s->cpu[], each ids table and the
 * heap; bench_session_free() gives them back through perfring_session_free(),
 * which is safe because every pr_cpu looks like an unopened one (leader_fd -1,
 * map NULL, fds NULL, scratch NULL). The ring memory (meta page, data and the
 * wrap scratch) belongs to b->rings[] and is freed here, never by the session.
 */
struct bench_session {
	struct perfring_session *s;
	struct perfring_event *ev;
	struct synth_ring *rings; /* one per s->cpu[] entry */
	size_t nrings;
};

static inline uint64_t bench_leader_id(size_t ring)
{
	return 1000 + 2 * (uint64_t)ring;
}

static inline uint64_t bench_event_id(size_t ring)
{
	return 1001 + 2 * (uint64_t)ring;
}

/* nrings rings of ring_size bytes (a power of two), one event with attr
 * (sample_type gets the forced bits) calling fn(ctx). 0 or -errno; on
 * failure b is left empty. */
int bench_session_synthetic(struct bench_session *b, size_t nrings, uint64_t ring_size,
			    const struct perf_event_attr *attr, perfring_sample_fn fn, void *ctx);
void bench_session_free(struct bench_session *b);

/* Empties every ring (head = tail = 0) so it can be filled again. */
void bench_session_clear(struct bench_session *b);

/* Makes every ring unread again: data_tail = 0, the head where filling left
 * it, the session's view of the ring re-initialised; merge state reset. The
 * ring's bytes are untouched, so each repetition reads the same records. */
void bench_session_rewind(struct bench_session *b);

/* The event's sample_type (with the forced bits). */
uint64_t bench_sample_type(const struct bench_session *b);

/* A SAMPLE record template for ring i: f's fields with identifier, cpu and
 * the ring's event id filled in. Returns its length (0 if it does not fit). */
size_t bench_template(const struct bench_session *b, size_t ring, struct synth_fields *f,
		      uint8_t *buf, size_t cap);

/* Offset of the TIME field in a SAMPLE of sample_type st. */
size_t bench_time_offset(uint64_t st);

/* Appends template rec (len bytes) to ring i with its time set to t.
 * -ENOSPC when the ring is full. */
int bench_put(struct bench_session *b, size_t ring, uint8_t *rec, size_t len, size_t time_off,
	      uint64_t t);

/* The smallest power of two >= n (n >= 8). */
uint64_t bench_pow2(uint64_t n);

/* Pins the calling thread to CPU 0; 0 or -errno. */
int bench_pin_cpu0(void);

/* This thread's CPU time in ns (see benchutil.c for why). */
uint64_t bench_now_ns(void);

/* Median of n values (sorts v). */
double bench_median(double *v, size_t n);

/*
 * Report: everything written with bench_out() goes to a buffer that
 * bench_out_close() prints to stdout and, when PERFRING_RESULTS names a file,
 * appends to it in one write (other benchmarks may append to the same file).
 * bench_out_open() starts with a markdown heading and the run's context: date,
 * kernel release, CPU model and the exact command line.
 */
int bench_out_open(const char *title, int argc, char **argv);
void bench_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_out_close(void);

#endif
