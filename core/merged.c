/* SPDX-License-Identifier: MIT */
/* Time order across CPUs. A loser tree picks the ring with the oldest head.
 * When one ring wins twice in a row, its run (its records older than every
 * other ring's head) goes through the drain loop in one call, so coarse
 * per-CPU runs cost what one ring costs. Otherwise each record is one step
 * over a pr_cursor, which holds all a step needs of its ring, so that
 * finely interleaved rings cost a decode and a tree replay a record and no
 * walk through struct pr_cpu. When the steps go on without runs, the merge
 * switches to batches (batch.c), which need no replay at all. */
#include "batch.h"
#include "cursor.h"
#include "deliver.h"
#include "parse.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>

int pr_merge_init(struct perfring_session *s)
{
	int err = 0;

	s->cur = pr_calloc(s->ncpu ? s->ncpu : 1, sizeof(*s->cur));
	if (s->cur)
		s->batch = pr_batch_new((uint32_t)s->ncpu, &err);
	if (!s->cur || err || pr_tree_init(&s->tree, (uint32_t)s->ncpu)) {
		pr_merge_free(s);
		return -ENOMEM;
	}
	return 0;
}

void pr_merge_free(struct perfring_session *s)
{
	free(s->cur);
	s->cur = NULL;
	pr_batch_free(s->batch);
	s->batch = NULL;
	pr_tree_free(&s->tree);
}

static void cursor_load(struct perfring_session *s, uint32_t i, struct pr_sbuf *sb)
{
	struct pr_cursor *u = &s->cur[i];

	hot_load(&s->cpu[i], &u->k, sb);
	u->data = s->cpu[i].ring.data;
	u->mask = s->cpu[i].ring.size - 1;
	u->ready = false;
}

/* The head's time if the fast path takes it. false: ask slow_key. */
static inline bool fast_key(struct pr_cursor *u, uint64_t *key)
{
	if (u->k.tail >= u->k.end || !pr_fast_key(&u->k, pr_cursor_at(u, u->k.tail), key))
		return false;
	u->ready = true;
	return true;
}

/* The key of ring i's next record, by the general path: syncs *c first and
 * reloads the cursor after (pr_peek may resync the tail). */
static bool __attribute__((noinline)) slow_key(struct perfring_session *s, uint32_t i,
					       uint64_t *key, struct pr_sbuf *sb)
{
	const struct perf_event_header *h;

	hot_store(&s->cpu[i], &s->cur[i].k);
	h = pr_peek(&s->cpu[i]);
	/* A record without a time has key 0: it goes as soon as its ring is
	 * next, before every head, and never counts late (pr_note_late). */
	*key = h ? pr_key_of(&s->cpu[i], h) : 0;
	cursor_load(s, i, sb);
	return h != NULL;
}

/* Sets ring i's leaf to its next head. */
static inline __attribute__((always_inline)) void
head_key(struct perfring_session *s, uint32_t i, struct pr_sbuf *sb, bool build)
{
	struct pr_cursor *u = &s->cur[i];
	uint64_t key = 0;
	bool live;

	/* The ring is read again after every other ring's head: fetch ahead. */
	__builtin_prefetch(u->data + ((u->k.tail + 256) & u->mask));
	live = fast_key(u, &key) || slow_key(s, i, &key, sb);
	if (build)
		pr_tree_set(&s->tree, i, key, live);
	else
		pr_tree_update(&s->tree, i, key, live);
}

/* Every ring's head into the tree; first (at a parse's start): each ring's
 * snapshot is taken (pr_begin) and its cursor loaded too. */
static void fill_tree(struct perfring_session *s, struct pr_sbuf *sb, bool first)
{
	uint32_t i;

	for (i = 0; i < s->ncpu; i++) {
		if (first) {
			pr_begin(&s->cpu[i]);
			cursor_load(s, i, sb);
		}
		head_key(s, i, sb, true);
	}
	pr_tree_build(&s->tree);
}

/* Tries a batch once the steps have gone on for b->wait without a run; a
 * refusal (a slow head, skewed times, too few records) doubles the wait. */
static int batch(struct perfring_session *s, struct pr_sbuf *sb, bool *stop)
{
	const struct pr_tree_ent *w = pr_tree_winner(&s->tree);
	struct pr_batch *b = s->batch;
	bool unpaid = false;
	int n = w ? pr_batch_run(s, w->key, sb, stop, &unpaid) : -1;

	/* A batch that a record the decode refuses cut short counts as a
	 * refusal: a ring of such records would otherwise cost a whole
	 * batch's reading and placing for each record. */
	if (n < 0 || unpaid)
		b->wait = !b->wait ? b->after : b->wait < b->wait_max / 2 ? b->wait * 2 : b->wait_max;
	else
		b->wait = 0; /* the stream suits batches: the next one right away */
	if (n <= 0)
		return 0;
	if (!*stop)
		fill_tree(s, sb, false);
	return n;
}

/* Ring i won twice in a row: its whole run through the drain loop. */
static int __attribute__((noinline)) run(struct perfring_session *s, uint32_t i,
					 struct pr_sbuf *sb, bool *stop)
{
	struct pr_run r = { .bound = pr_tree_second(&s->tree), .idx = i };
	struct pr_cpu *c = &s->cpu[i];
	int n;

	hot_store(c, &s->cur[i].k);
	n = pr_drain_run(s, c, &r, sb, stop);
	cursor_load(s, i, sb);
	return n;
}

/* The winner's head through the general path. Returns samples delivered. */
static int __attribute__((noinline)) slow_one(struct perfring_session *s, uint32_t i,
					     struct pr_sbuf *sb, bool *stop)
{
	struct pr_cpu *c = &s->cpu[i];
	int step;

	hot_store(c, &s->cur[i].k);
	step = pr_slow_step(s, c, NULL);
	cursor_load(s, i, sb);
	if (step & STEP_STOP)
		*stop = true;
	return step & STEP_SAMPLE;
}

/* One record of the winner, ring i, whose key is key. */
static inline __attribute__((always_inline)) int
step(struct perfring_session *s, uint32_t i, uint64_t key, struct pr_sbuf *sb, bool *stop)
{
	struct pr_cursor *u = &s->cur[i];
	const struct perf_event_header *h;

	pr_note_late(s, &s->cpu[i], key);
	h = pr_cursor_at(u, u->k.tail);
	pr_sbuf_ready(sb, u->k.ev);
	if (!u->ready || !hot_decode(&u->k, h, &sb->smp))
		return slow_one(s, i, sb, stop);
	u->k.tail += h->size;
	u->k.fast++;
	u->k.last_time = sb->smp.time;
	if (pr_event_call(u->k.ev, &sb->smp))
		*stop = true;
	return 1;
}

/* Records read so far from every ring; merged_records is its growth,
 * so the per-record steps need not count twice. */
static uint64_t records_of(const struct perfring_session *s)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->ncpu; i++)
		sum += s->cpu[i].st.records;
	return sum;
}

int pr_parse_merged(struct perfring_session *s, bool *stopped)
{
	struct pr_sbuf sb = { .dirty = true };
	uint64_t before = records_of(s);
	const struct pr_tree_ent *w;
	uint32_t i, last = UINT32_MAX, steps = 0;
	bool stop = false;
	int n = 0;

	fill_tree(s, &sb, true);
	while (!stop && (w = pr_tree_winner(&s->tree))) {
		i = w->idx;
		if (i == last) {
			n += run(s, i, &sb, &stop);
			last = UINT32_MAX;
			steps = 0;
		} else {
			n += step(s, i, w->key, &sb, &stop);
			last = i;
			steps++;
		}
		if (!stop)
			head_key(s, i, &sb, false);
		if (!stop && s->batch && steps >= s->batch->wait) {
			n += batch(s, &sb, &stop);
			last = UINT32_MAX;
			steps = 0;
		}
	}
	for (i = 0; i < s->ncpu; i++) {
		hot_store(&s->cpu[i], &s->cur[i].k);
		pr_end(&s->cpu[i]);
	}
	s->merged_records += records_of(s) - before;
	if (stopped)
		*stopped = stop;
	return n;
}
