/* SPDX-License-Identifier: MIT */
/* Time order across CPUs. A loser tree picks the ring with the oldest head.
 * When one ring wins twice in a row, its run (its records older than every
 * other ring's head) goes through the drain loop in one call, so coarse
 * per-CPU runs cost what one ring costs. Otherwise each record is one step
 * over a pr_cursor, which holds all a step needs of its ring, so that
 * finely interleaved rings cost a decode and a tree replay a record and no
 * walk through struct pr_cpu. When the steps go on without runs, the merge
 * switches to batches (batch.c), which need no replay at all. */
#include "read/merge.h"
#include "read/deliver.h"
#include "read/drain.h"
#include "read/order.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>

struct pr_merge *pr_merge_new(struct pr_cpu *cpu, uint32_t n)
{
	struct pr_merge *m = pr_calloc(1, sizeof(*m));
	int err = 0;

	if (!m)
		return NULL;
	m->cpu = cpu;
	m->n = n;
	m->cur = pr_calloc(n ? n : 1, sizeof(*m->cur));
	if (m->cur)
		m->batch = pr_batch_new(n, &err);
	if (!m->cur || err || pr_tree_init(&m->tree, n)) {
		pr_merge_free(m);
		return NULL;
	}
	return m;
}

void pr_merge_free(struct pr_merge *m)
{
	if (!m)
		return;
	free(m->cur);
	pr_batch_free(m->batch);
	pr_tree_free(&m->tree);
	free(m);
}

void pr_merge_reset(struct pr_merge *m)
{
	m->newest = 0;
}

static void cursor_load(struct pr_merge *m, uint32_t i, struct pr_sbuf *sb)
{
	struct pr_cursor *u = &m->cur[i];

	fast_load(&m->cpu[i], &u->k, sb);
	u->data = m->cpu[i].ring.data;
	u->mask = m->cpu[i].ring.size - 1;
	u->head = m->cpu[i].ring.head;
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
static bool __attribute__((noinline)) slow_key(struct pr_merge *m, uint32_t i, uint64_t *key,
					       struct pr_sbuf *sb)
{
	const struct perf_event_header *h;

	fast_store(&m->cpu[i], &m->cur[i].k);
	h = pr_peek(&m->cpu[i]);
	/* A record without a time has key 0: it goes as soon as its ring is
	 * next, before every head, and is never given to the late rule. */
	*key = h ? pr_key_of(&m->cpu[i], h) : 0;
	cursor_load(m, i, sb);
	return h != NULL;
}

/* Sets ring i's leaf to its next head. */
static inline __attribute__((always_inline)) void
head_key(struct pr_merge *m, uint32_t i, struct pr_sbuf *sb, bool build)
{
	struct pr_cursor *u = &m->cur[i];
	uint64_t key = 0;
	bool live;

	/* The ring is read again after every other ring's head: fetch ahead. */
	__builtin_prefetch(u->data + ((u->k.tail + 256) & u->mask));
	live = fast_key(u, &key) || slow_key(m, i, &key, sb);
	if (build)
		pr_tree_set(&m->tree, i, key, live);
	else
		pr_tree_update(&m->tree, i, key, live);
}

/* Every ring's head into the tree; first (at a parse's start): each ring's
 * snapshot is taken (pr_begin) and its cursor loaded too. */
static void fill_tree(struct pr_merge *m, struct pr_sbuf *sb, bool first)
{
	uint32_t i;

	for (i = 0; i < m->n; i++) {
		if (first) {
			pr_begin(&m->cpu[i]);
			cursor_load(m, i, sb);
		}
		head_key(m, i, sb, true);
	}
	pr_tree_build(&m->tree);
}

/* Moves each ring's cursor past its records that a batch delivered, and
 * applies the late rule to them: each ring's are in time order, so its late
 * ones lead. */
static void advance_past_batch(struct pr_merge *m)
{
	const struct pr_batch *b = m->batch;
	const struct pr_batch_item *it;
	uint64_t newest = m->newest, nw;
	struct pr_cursor *u;
	uint32_t i, j, done;

	for (i = 0; i < m->n; i++) {
		if (!(done = b->done[i]))
			continue;
		u = &m->cur[i];
		nw = m->newest;
		for (j = 0; j < done && pr_late(&nw, pr_batch_item(b, i, j)->key); j++)
			PR_STAT_ADD(&m->cpu[i], late, 1);
		it = pr_batch_item(b, i, done - 1);
		/* A window never crosses the wrap, so offsets grow with the tail. */
		u->k.tail += (uint64_t)((const uint8_t *)it->h - u->data) + it->h->size -
			     (u->k.tail & u->mask);
		u->k.fast += done;
		newest = it->key > newest ? it->key : newest;
	}
	m->newest = newest;
}

/* Tries a batch once the steps have gone on for b->wait without a run; a
 * refusal (a slow head, skewed times, too few records) doubles the wait. */
static int batch(struct pr_merge *m, struct pr_sbuf *sb, bool *stop)
{
	const struct pr_tree_ent *w = pr_tree_winner(&m->tree);
	struct pr_batch *b = m->batch;
	bool unpaid = false;
	int n = w ? pr_batch_run(b, m->cur, m->n, w->key, sb, stop, &unpaid) : -1;

	/* A batch that a record the decode refuses cut short counts as a
	 * refusal: a ring of such records would otherwise cost a whole
	 * batch's reading and placing for each record. */
	if (n < 0 || unpaid)
		b->wait = !b->wait ? b->after : b->wait < b->wait_max / 2 ? b->wait * 2 : b->wait_max;
	else
		b->wait = 0; /* the stream suits batches: the next one right away */
	if (n <= 0)
		return 0;
	advance_past_batch(m);
	if (!*stop)
		fill_tree(m, sb, false);
	return n;
}

/* Ring i won twice in a row: its whole run through the drain loop. */
static int __attribute__((noinline)) run(struct pr_merge *m, uint32_t i, struct pr_sbuf *sb,
					 bool *stop)
{
	struct pr_run r = { .bound = pr_tree_second(&m->tree), .idx = i, .newest = m->newest };
	struct pr_cpu *c = &m->cpu[i];
	int n;

	fast_store(c, &m->cur[i].k);
	n = pr_drain_run(c, &r, sb, stop);
	PR_STAT_ADD(c, late, r.late);
	m->newest = r.newest;
	cursor_load(m, i, sb);
	return n;
}

/* The winner's head through the general path. Returns samples delivered. */
static int __attribute__((noinline)) slow_one(struct pr_merge *m, uint32_t i,
					     struct pr_sbuf *sb, bool *stop)
{
	struct pr_cpu *c = &m->cpu[i];
	int step;

	fast_store(c, &m->cur[i].k);
	step = pr_slow_step(c, NULL);
	cursor_load(m, i, sb);
	if (step & PR_STEP_STOP)
		*stop = true;
	return step & PR_STEP_SAMPLE;
}

/* One record of the winner, ring i, whose key is key. */
static inline __attribute__((always_inline)) int
step(struct pr_merge *m, uint32_t i, uint64_t key, struct pr_sbuf *sb, bool *stop)
{
	struct pr_cursor *u = &m->cur[i];
	const struct perf_event_header *h;

	if (key)
		PR_STAT_ADD(&m->cpu[i], late, pr_late(&m->newest, key));
	h = pr_cursor_at(u, u->k.tail);
	pr_sbuf_ready(sb, u->k.ev);
	if (!u->ready || !fast_decode(&u->k, h, &sb->smp))
		return slow_one(m, i, sb, stop);
	u->k.tail += h->size;
	u->k.fast++;
	if (pr_event_call(u->k.ev, &sb->smp))
		*stop = true;
	return 1;
}

/* Records read so far from every ring; merged_records is its growth,
 * so the per-record steps need not count twice. */
static uint64_t records_of(const struct pr_merge *m)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < m->n; i++)
		sum += m->cpu[i].st.records;
	return sum;
}

/* R1 (docs/RULES.md): a merged parse touches every ring, so it claims them
 * all or none. */
static bool claim_all(struct pr_merge *m)
{
	uintptr_t me = pr_self();
	uint32_t i, j;

	for (i = 0; i < m->n; i++) {
		if (!pr_claim(&m->cpu[i], me)) {
			for (j = 0; j < i; j++)
				pr_cpu_unclaim(&m->cpu[j]);
			return false;
		}
	}
	return true;
}

bool pr_merge_busy(const struct pr_merge *m)
{
	uint32_t i;

	for (i = 0; i < m->n; i++)
		if (__atomic_load_n(&m->cpu[i].busy, __ATOMIC_RELAXED))
			return true;
	return false;
}

int pr_merge_parse(struct pr_merge *m, bool *stopped)
{
	struct pr_sbuf sb = { .shape = PR_SHAPE_ANY };
	uint64_t before;
	const struct pr_tree_ent *w;
	uint32_t i, last = UINT32_MAX, steps = 0;
	bool stop = false;
	int n = 0;

	if (stopped)
		*stopped = false;
	if (!claim_all(m))
		return -EBUSY;
	before = records_of(m);
	fill_tree(m, &sb, true);
	while (!stop && (w = pr_tree_winner(&m->tree))) {
		i = w->idx;
		if (i == last) {
			n += run(m, i, &sb, &stop);
			last = UINT32_MAX;
			steps = 0;
		} else {
			n += step(m, i, w->key, &sb, &stop);
			last = i;
			steps++;
		}
		if (!stop)
			head_key(m, i, &sb, false);
		if (!stop && m->batch && steps >= m->batch->wait) {
			n += batch(m, &sb, &stop);
			last = UINT32_MAX;
			steps = 0;
		}
	}
	for (i = 0; i < m->n; i++) {
		fast_store(&m->cpu[i], &m->cur[i].k);
		pr_end(&m->cpu[i]);
		pr_cpu_unclaim(&m->cpu[i]);
	}
	m->records += records_of(m) - before;
	if (stopped)
		*stopped = stop;
	return n;
}
