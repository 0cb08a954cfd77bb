/* SPDX-License-Identifier: MIT */
/* Why a batch gives the tree's order: each ring's window is a run of fast
 * records with non-decreasing times, and its bound is the smallest time its
 * unread rest can still bring to the ring's head (the next record's time, or
 * the window's last when the next one is not a fast record and so has no
 * time we may read ahead). Every record below the smallest bound, t1, sorts
 * before every record a window leaves, so the tree would deliver exactly
 * those next, by (time, CPU), each ring in ring order.
 *
 * The records below t1 are then placed by time: bucket (time - lo) >> shift,
 * each bucket a list in (time, CPU, ring) order. Reading the buckets in turn
 * gives the batch in order, with no sort. A record past the last bucket ends
 * its ring's window like any other bound. A record that would go too deep
 * into a list (times too skewed for the buckets) ends the batch before it:
 * t1 drops to its time, and after SKEW_TRIES such cuts the batch is left to
 * the tree. shift follows the time between records, from batch to batch. */
#include "read/batch.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_RECORDS 4096u /* a batch's records, read twice, stay in L2 */
#define MIN_PER_RING 16u
#define MIN_RINGS 2u
#define LIST_MAX 16u        /* a record placed deeper into a list: skew */
#define SKEW_TRIES 3u       /* smaller batches tried after a list too long */

struct pr_batch *pr_batch_new(uint32_t n, int *err)
{
	struct pr_batch *b;

	*err = 0;
	if (n < MIN_RINGS)
		return NULL;
	b = pr_calloc(1, sizeof(*b));
	if (!b)
		goto nomem;
	b->per_ring = BATCH_RECORDS / n > MIN_PER_RING ? BATCH_RECORDS / n : MIN_PER_RING;
	b->cap = b->per_ring * n;
	b->nb = (2 * b->cap + 63) / 64 * 64;
	b->min_total = b->cap / 8;
	b->after = b->wait = 64;
	b->wait_max = 1u << 16;
	b->in = pr_calloc(b->cap, sizeof(*b->in));
	b->next = pr_calloc(b->cap, sizeof(*b->next));
	b->slot = pr_calloc(b->nb, sizeof(*b->slot));
	b->table = pr_calloc(b->nb, sizeof(*b->table));
	b->bits = pr_calloc(b->nb / 64, sizeof(*b->bits));
	b->start = pr_calloc(n, sizeof(*b->start));
	b->len = pr_calloc(n, sizeof(*b->len));
	b->done = pr_calloc(n, sizeof(*b->done));
	if (b->in && b->next && b->slot && b->table && b->bits && b->start && b->len && b->done)
		return b;
	pr_batch_free(b);
nomem:
	*err = -ENOMEM;
	return NULL;
}

void pr_batch_free(struct pr_batch *b)
{
	if (!b)
		return;
	free(b->in);
	free(b->next);
	free(b->slot);
	free(b->table);
	free(b->bits);
	free(b->start);
	free(b->len);
	free(b->done);
	free(b);
}

/* The buckets, held in registers while records are placed. */
struct lists {
	struct pr_batch_item *in;
	uint32_t *next, *slot;
	const struct perf_event_header **table;
	uint64_t *bits;
};

/* Links item j into bucket bk's list after every item whose time is not
 * above its own: equal times stay in the order they were placed, which is
 * CPU order, then ring order. A list is a ring: slot holds its last item,
 * whose next is its first, so that in-order arrivals append in one step.
 * false: the item would go too deep into the list (times too skewed). */
static __attribute__((noinline)) bool list_insert(const struct lists *l, uint32_t j, uint64_t key,
					    uint64_t bk)
{
	uint32_t last = l->slot[bk], p, steps = 0;

	if (l->table[bk]) {
		l->table[bk] = NULL; /* a list now */
		l->next[last] = last; /* the one item so far, as a list */
	}
	if (l->in[last].key <= key) {
		l->next[j] = l->next[last];
		l->next[last] = l->slot[bk] = j;
		return true;
	}
	/* Ends at last at the latest, whose time is above key. */
	for (p = last; l->in[l->next[p]].key <= key; p = l->next[p])
		if (++steps == LIST_MAX)
			return false;
	l->next[j] = l->next[p];
	l->next[p] = j;
	return true;
}

/* Puts items [j, end) into their buckets: alone, a bucket holds its record
 * in table, which delivery reads in order; else the item joins the list.
 * false: item *at would go too deep into its list. Out of line, with
 * list_insert out of line too, so the loop keeps all it uses in registers. */
static __attribute__((noinline)) bool place_run(const struct lists *l, uint32_t j, uint32_t end,
						uint64_t lo, unsigned shift, uint32_t *at)
{
	const struct pr_batch_item *const in = l->in;
	const struct perf_event_header **const table = l->table;
	uint64_t *const bits = l->bits, bk, m, w;
	uint32_t *const slot = l->slot;

	for (; j < end; j++) {
		bk = (in[j].key - lo) >> shift;
		m = 1ull << (bk % 64);
		w = bits[bk / 64];
		if (__builtin_expect(!(w & m), 1)) {
			bits[bk / 64] = w | m;
			slot[bk] = j;
			table[bk] = in[j].h;
		} else if (!list_insert(l, j, in[j].key, bk)) {
			*at = j;
			return false;
		}
	}
	return true;
}

/* Places every window's records into their buckets. false: a list grew
 * too long, at the record whose time is *skew. */
static bool place_all(const struct pr_batch *b, uint32_t n, uint64_t lo, uint64_t *skew)
{
	const struct lists l = { b->in, b->next, b->slot, b->table, b->bits };
	uint32_t i, at;

	memset(b->bits, 0, (size_t)b->nb / 8);
	for (i = 0; i < n; i++) {
		if (!place_run(&l, b->start[i], b->start[i] + b->len[i], lo, b->shift, &at)) {
			*skew = l.in[at].key;
			return false;
		}
	}
	return true;
}

/* The window after it is read one batch later, one of K streams: more than
 * the hardware prefetcher follows. */
static void prefetch(const struct pr_cursor *u, uint64_t from, uint64_t len)
{
	uint64_t off;

	for (off = 0; off < len; off += 64)
		__builtin_prefetch(u->data + ((from + off) & u->mask));
}

/* A header with its misc bits cleared: type and size, which every sample
 * of one event in a run of equal sizes shares (misc, the cpumode, varies). */
#define HDR_TYPE_SIZE 0xffff0000ffffffffull

/* What a window reads and where it stands, kept in registers. */
struct win {
	const uint8_t *p, *pend;     /* the next record; the end of what is fast */
	struct pr_batch_item *it, *last;
	uint64_t id, prev, kmax, key;
	uint32_t min;
	int16_t time;
};

/* From w->p on, the records of one run: the first a sample of w->id of at
 * least w->min bytes, the rest of its type and size and id. Stores each
 * with a time in [prev, kmax) while there is room. Returns true when it
 * ended at a fast record it could not store (w->key, its time): the
 * window's bound. false: at the end, or at a record the run does not
 * take, which the next run may. */
static inline bool window_run(struct win *w, bool *more)
{
	const struct perf_event_header *h = (const struct perf_event_header *)w->p;
	const uint64_t want = pr_ld64(w->p) & HDR_TYPE_SIZE, size = h->size;
	const uint8_t *stop;

	*more = false;
	if (!pr_sample_fits(h, 0, (uint64_t)(w->pend - w->p), w->min, w->id))
		return false;
	/* Records of this size that fit before pend: none is read past it. */
	stop = w->p + (uint64_t)(w->pend - w->p) / size * size;
	do {
		if ((pr_ld64(w->p) & HDR_TYPE_SIZE) != want || pr_ld64(w->p + 8) != w->id) {
			*more = true;
			return false;
		}
		w->key = pr_ld64(w->p + 8 + w->time);
		if (w->it == w->last || w->key < w->prev || w->key >= w->kmax)
			return true;
		*w->it++ = (struct pr_batch_item){ w->key, (const struct perf_event_header *)w->p };
		w->prev = w->key;
		w->p += size;
	} while (w->p < stop);
	*more = w->p < w->pend;
	return false;
}

/* Reads ring u's window into it: at most max fast records, with times from
 * prev on and below kmax. Gives its bound; returns its length. *ok false:
 * its head (at *head, the ring's snapshot) is not a fast record, so no
 * batch now. A record of its predecessor's type and size needs only its
 * id checked: the rest was checked on the first of the run. Out of line:
 * the loop needs every register. */
static __attribute__((noinline)) uint32_t
window(const struct pr_cursor *u, uint64_t prev, uint64_t kmax, uint32_t max,
       struct pr_batch_item *it, uint64_t *bound, bool *ok)
{
	const uint64_t tail0 = u->k.tail;
	const uint8_t *p0;
	struct win w;
	uint64_t tail;
	bool at_fast = false, more = true;

	/* An aligned tail stays aligned: every size taken is a multiple of 8. */
	if (!u->k.ev || (tail0 & 7)) {
		*ok = tail0 == u->head;
		*bound = UINT64_MAX;
		return 0;
	}
	/* end never lies past the wrap, so the window is contiguous. */
	p0 = u->data + (tail0 & u->mask);
	w = (struct win){ .p = p0, .pend = p0 + (u->k.end - tail0), .it = it, .last = it + max,
			  .id = u->k.id, .prev = prev, .kmax = kmax,
			  .min = (uint32_t)sizeof(struct perf_event_header) + u->k.ev->layout.fixed,
			  .time = u->k.ev->layout.time };
	while (more && w.p < w.pend && !(at_fast = window_run(&w, &more)))
		;
	tail = tail0 + (uint64_t)(w.p - p0);
	*ok = true;
	if (at_fast) { /* ended before a fast record: its time */
		*bound = w.key;
		prefetch(u, tail, tail - tail0);
		return (uint32_t)(w.it - it);
	}
	*bound = tail == u->head ? UINT64_MAX : w.prev;
	*ok = w.it != it || tail == u->head;
	return (uint32_t)(w.it - it);
}

/* Where the batch's last bucket ends, saturated: shift can be up to 63. */
static uint64_t buckets_end(const struct pr_batch *b, uint64_t lo)
{
	uint64_t span = b->nb > UINT64_MAX >> b->shift ? UINT64_MAX : (uint64_t)b->nb << b->shift;

	return lo + span < lo ? UINT64_MAX : lo + span;
}

/* Reads every window, all of one event (*ev). Returns t1, the smallest
 * bound; false: no batch. */
static bool gather(struct pr_batch *b, const struct pr_cursor *cur, uint32_t nr, uint64_t lo,
		   uint64_t *t1, struct perfring_event **ev)
{
	const uint64_t kmax = buckets_end(b, lo);
	const struct pr_cursor *u;
	uint32_t i, used = 0, n;
	uint64_t bound;
	bool ok;

	*t1 = UINT64_MAX;
	*ev = NULL;
	for (i = 0; i < nr; i++) {
		b->len[i] = 0;
		u = &cur[i];
		b->start[i] = used;
		n = window(u, lo, kmax, b->per_ring, b->in + used, &bound, &ok);
		if (!ok || (n && *ev && *ev != u->k.ev))
			return false;
		if (n)
			*ev = u->k.ev;
		b->len[i] = n;
		used += b->len[i];
		if (bound < *t1)
			*t1 = bound;
	}
	return true;
}

/* Cuts each window to its records below t1. Returns how many that leaves. */
static uint32_t cut(struct pr_batch *b, uint32_t n, uint64_t t1)
{
	uint32_t i, total = 0;

	for (i = 0; i < n; i++) {
		while (b->len[i] && b->in[b->start[i] + b->len[i] - 1].key >= t1)
			b->len[i]--;
		total += b->len[i];
	}
	return total;
}

/* The next batch's buckets: as wide as the time between this batch's
 * records, or down to half that, so that nb of them cover cap records. */
static void adapt(struct pr_batch *b, uint64_t lo, uint64_t t1, uint32_t total)
{
	uint64_t per;

	if (t1 == UINT64_MAX)
		return;
	if (!total) {
		b->shift = b->shift + 4 < 63 ? b->shift + 4 : 63;
		return;
	}
	per = (t1 - lo) / total;
	b->shift = per ? 63 - (unsigned)__builtin_clzll(per) : 0;
}

/* One record to ev's callback, decoded as a sample of shape (ev's, which
 * never changes once started). false: the decode refused it, or the
 * callback asked to stop (*stop). */
static inline __attribute__((always_inline)) bool
deliver_one(struct perfring_event *ev, enum pr_shape shape, const struct perf_event_header *h,
	    struct pr_sbuf *sb, bool *stop)
{
	if (!pr_decode_as(&ev->layout, shape, h, &sb->smp))
		return false;
	if (pr_event_call(ev, &sb->smp)) {
		*stop = true;
		return false;
	}
	return true;
}

/* A bucket's list, in order. Returns how many went out; *end: the item it
 * stopped at, if it did. */
static uint32_t __attribute__((noinline))
deliver_list(const struct pr_batch *b, struct perfring_event *ev, uint64_t bk,
	     struct pr_sbuf *sb, bool *stop, uint32_t *end, bool *ended)
{
	const enum pr_shape shape = (enum pr_shape)ev->layout.shape;
	uint32_t last = b->slot[bk], x, n = 0;

	for (x = b->next[last];; x = b->next[x], n++) {
		if (!deliver_one(ev, shape, b->in[x].h, sb, stop)) {
			*end = x;
			*ended = true;
			return n + *stop;
		}
		if (x == last)
			return n + 1;
	}
}

/* The batch's records to ev's callback, in order. Returns how many went
 * out: all, or up to the one whose callback asked to stop (*end), or up to
 * one the fast decode refuses (*end; the tree's step then gives it to the
 * general path). Inlined once per shape, so the decode's shape is known. */
static inline __attribute__((always_inline)) uint32_t
deliver_as(const struct pr_batch *b, struct perfring_event *ev, enum pr_shape shape,
	   struct pr_sbuf *sb, bool *stop, uint32_t *end)
{
	const struct perf_event_header *const *table = b->table, *h;
	const uint32_t words = b->nb / 64;
	uint32_t wi, n = 0, bk;
	bool ended = false;
	uint64_t w;

	for (wi = 0; wi < words; wi++) {
		for (w = b->bits[wi]; w; w &= w - 1) {
			bk = wi * 64 + (uint32_t)__builtin_ctzll(w);
			if (__builtin_expect((h = table[bk]) != NULL, 1)) {
				if (!deliver_one(ev, shape, h, sb, stop)) {
					*end = b->slot[bk];
					return n + *stop;
				}
				n++;
				continue;
			}
			n += deliver_list(b, ev, bk, sb, stop, end, &ended);
			if (ended)
				return n;
		}
	}
	return n;
}

static uint32_t deliver(const struct pr_batch *b, struct perfring_event *ev, struct pr_sbuf *sb,
			bool *stop, uint32_t *end)
{
	pr_sbuf_ready(sb, ev);
	switch (ev->layout.shape) {
	case PR_SHAPE_TRACEPOINT:
		return deliver_as(b, ev, PR_SHAPE_TRACEPOINT, sb, stop, end);
	case PR_SHAPE_FORCED:
		return deliver_as(b, ev, PR_SHAPE_FORCED, sb, stop, end);
	default:
		return deliver_as(b, ev, PR_SHAPE_ANY, sb, stop, end);
	}
}

/* How many of each ring's records went out when the batch ended at item z,
 * z itself included or not: those that sort before it by (time, CPU, ring
 * order). */
static void count_done(struct pr_batch *b, uint32_t n, uint32_t z, bool incl)
{
	const uint64_t kz = b->in[z].key;
	uint32_t i, j, r = 0;

	for (i = 0; i < n; i++)
		if (z >= b->start[i] && z < b->start[i] + b->len[i])
			r = i;
	for (i = 0; i < n; i++) {
		b->done[i] = 0;
		if (i == r)
			continue;
		for (j = b->start[i]; j < b->start[i] + b->len[i]; j++)
			if (b->in[j].key > kz || (b->in[j].key == kz && i > r))
				break;
		b->done[i] = j - b->start[i];
	}
	b->done[r] = z - b->start[r] + incl;
}

int pr_batch_run(struct pr_batch *b, const struct pr_cursor *cur, uint32_t nr, uint64_t lo,
		 uint64_t limit, struct pr_sbuf *sb, bool *stop, bool *unpaid)
{
	struct perfring_event *ev;
	uint32_t total, n, end = 0, i, tries = 0;
	uint64_t t1;
	bool capped;

	*unpaid = false;
	if (!gather(b, cur, nr, lo, &t1, &ev))
		return -1;
	/* The pass's bound is one more bound: below limit + 1 is up to limit.
	 * Too few records under it is the pass's end, not the stream's shape:
	 * -2, which is no refusal. */
	capped = limit < t1;
	if (capped)
		t1 = limit + 1;
	total = cut(b, nr, t1);
	if (capped && total < b->min_total)
		return -2;
	/* A list too long ends the batch before its record: the records below
	 * that are as good a batch, only smaller. */
	while (total >= b->min_total && total && tries++ < SKEW_TRIES &&
	       !place_all(b, nr, lo, &t1))
		total = cut(b, nr, t1);
	if (total < b->min_total || !total || tries > SKEW_TRIES) {
		adapt(b, lo, t1, total);
		return -1;
	}
	n = deliver(b, ev, sb, stop, &end);
	*unpaid = n < total && !*stop && n < b->min_total;
	if (n < total)
		count_done(b, nr, end, *stop);
	else
		for (i = 0; i < nr; i++)
			b->done[i] = b->len[i];
	b->batches++;
	b->records += n;
	adapt(b, lo, t1, total);
	return (int)n;
}
