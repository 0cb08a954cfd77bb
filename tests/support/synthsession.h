/* SPDX-License-Identifier: MIT */
/* Test support: a started session over synthetic rings, for the tests, the
 * fuzz targets and the benchmarks. Reaches the library's internals (link
 * core/libperfring-core.la). */
#ifndef PR_TESTS_SYNTHSESSION_H
#define PR_TESTS_SYNTHSESSION_H

#include "session.h"
#include "synth.h"

#include <perfring/perfring.h>

/*
 * A session that looks started to every parse entry point (parse_for_cpu,
 * the pull form, parse_all) but reads K synthetic rings instead of kernel
 * mmaps. No fd is opened and nothing is mapped.
 *
 * Ring i is s->cpu[i], with the fake CPU number i (CPU numbers need not be
 * online: only pr_cpu_index() looks at them, and they are sorted). Its id
 * table holds the ids a real CPU's does: synth_leader_id(i) for the dummy
 * leader (NULL event) and synth_event_k_id(i, k) for event k (k = 0 is
 * synth_event_id(i)); every ring has every event.
 *
 * Ownership: the session owns the events (added with add_attr, so each
 * sample_type carries the forced bits), s->cpu[], each ids table and the
 * heap; synth_session_free() gives them back through perfring_session_free(),
 * which is safe because every pr_cpu looks like an unopened one (leader_fd -1,
 * map NULL, fds NULL, scratch NULL). The ring memory (meta page, data and the
 * wrap scratch) belongs to b->rings[] and is freed here, never by the session.
 */
#define SYNTH_EVENTS_MAX 4

struct synth_session {
	struct perfring_session *s;
	struct perfring_event *ev;  /* evs[0] */
	struct perfring_event *evs[SYNTH_EVENTS_MAX];
	size_t nevents;
	struct synth_ring *rings; /* one per s->cpu[] entry */
	size_t nrings;
};

static inline uint64_t synth_leader_id(size_t ring)
{
	return 1000 + 2 * (uint64_t)ring;
}

static inline uint64_t synth_event_id(size_t ring)
{
	return 1001 + 2 * (uint64_t)ring;
}

/* Event k >= 1 of ring i; ids of different rings and events never meet. */
static inline uint64_t synth_event_k_id(size_t ring, size_t k)
{
	return (uint64_t)k << 32 | synth_event_id(ring);
}

/* One event of a synthetic session: its attr (sample_type gets the forced
 * bits; add_attr's rules apply, R12 too) and its callback. */
struct synth_event_spec {
	const struct perf_event_attr *attr;
	perfring_sample_fn fn;
	void *ctx;
};

/* nrings rings of ring_size bytes (a power of two), one event with attr
 * (sample_type gets the forced bits) calling fn(ctx). 0 or -errno; on
 * failure b is left empty. */
int synth_session_new(struct synth_session *b, size_t nrings, uint64_t ring_size,
			    const struct perf_event_attr *attr, perfring_sample_fn fn, void *ctx);

/* The same with n events (1 to SYNTH_EVENTS_MAX), all writing into every
 * ring; b->evs[k] is event k. */
int synth_session_new_events(struct synth_session *b, size_t nrings, uint64_t ring_size,
			     const struct synth_event_spec *evs, size_t n);
void synth_session_free(struct synth_session *b);

/* Empties every ring (head = tail = 0) so it can be filled again. */
void synth_session_clear(struct synth_session *b);

/* Makes every ring unread again: data_tail = 0, the head where filling left
 * it, the session's view of the ring re-initialised; merge state reset. The
 * ring's bytes are untouched, so each repetition reads the same records. */
void synth_session_rewind(struct synth_session *b);

/* The forms a test runs a stream through: parse_all with the merge's
 * batches never tried, or tried after every step; parse_for_cpu per ring;
 * the pull form per ring, one sample struct reused for every sample as a
 * caller would, each handed to its event's callback (records to the
 * record callback). */
enum synth_form { SYNTH_TREE, SYNTH_BATCHES, SYNTH_PER_CPU, SYNTH_PULL, SYNTH__FORMS };
extern const char *const synth_form_name[];

/* Reads every ring in form f. Returns the samples handled, -errno, or
 * -ENOTSUP when the merge has no batches (one ring) to turn on or off, or
 * when SYNTH_BATCHES ran none. */
int synth_session_parse(struct synth_session *b, enum synth_form f);

/* The event's sample_type (with the forced bits); _k: event k's. */
uint64_t synth_session_sample_type(const struct synth_session *b);
uint64_t synth_session_sample_type_k(const struct synth_session *b, size_t k);

/* A SAMPLE record template for ring i: f's fields with identifier, cpu and
 * the ring's event id filled in. Returns its length (0 if it does not fit).
 * _k: of event k. */
size_t synth_session_template(const struct synth_session *b, size_t ring, struct synth_fields *f,
		      uint8_t *buf, size_t cap);
size_t synth_session_template_k(const struct synth_session *b, size_t ring, size_t k,
				struct synth_fields *f, uint8_t *buf, size_t cap);

/* Offset of the TIME field in a SAMPLE of sample_type st. */
size_t synth_time_offset(uint64_t st);

/* Appends template rec (len bytes) to ring i with its time set to t.
 * -ENOSPC when the ring is full. */
int synth_session_put(struct synth_session *b, size_t ring, uint8_t *rec, size_t len, size_t time_off,
	      uint64_t t);

/* The smallest power of two >= n (n >= 8). */
uint64_t synth_pow2(uint64_t n);

#endif
