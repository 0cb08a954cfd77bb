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
#include "base/clock.h"
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
	if (!m->cur || err || pr_tree_init(&m->tree, n) || pr_window_init(&m->win, n)) {
		pr_merge_free(m);
		return NULL;
	}
	return m;
}

void pr_merge_free(struct pr_merge *m)
{
	uint32_t j;

	if (!m)
		return;
	for (j = 0; j < m->nrb; j++)
		pr_kept_free(&m->rbl[j].kept);
	free(m->rbl);
	free(m->cur);
	pr_batch_free(m->batch);
	pr_tree_free(&m->tree);
	pr_window_free(&m->win);
	free(m);
}

int pr_merge_set_ringbufs(struct pr_merge *m, struct pr_rbuf **rb, uint32_t n)
{
	struct pr_rbleaf *l = n ? pr_calloc(n, sizeof(*l)) : NULL;
	struct pr_tree t;
	uint32_t j;

	if ((n && !l) || pr_tree_init(&t, m->n + n)) {
		free(l);
		return -ENOMEM;
	}
	for (j = 0; j < m->nrb; j++)
		pr_kept_free(&m->rbl[j].kept);
	free(m->rbl);
	for (j = 0; j < n; j++)
		l[j].rb = rb[j];
	pr_tree_free(&m->tree);
	m->tree = t;
	m->rbl = l;
	m->nrb = n;
	return 0;
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

/* A pass's start over the ring buffers' leaves (after fill_tree, which
 * left them unset: only the first fill of a pass reaches them). */
static void fill_rb(struct pr_merge *m, bool window)
{
	uint64_t key;
	uint32_t j;
	bool live;

	for (j = 0; j < m->nrb; j++) {
		live = pr_rbleaf_begin(&m->rbl[j], window, &key);
		pr_tree_set(&m->tree, m->n + j, key, live);
	}
	pr_tree_build(&m->tree);
}

/* Ring buffer j's leaf won: its record, and its next key into the tree (and
 * into the leaf's slot that a rebuild reads). */
static int __attribute__((noinline)) rb_step(struct pr_merge *m, uint32_t j, uint64_t key,
					     bool *stop)
{
	uint64_t next;
	bool live;
	int n;

	if (key)
		pr_late(&m->newest, key); /* a ring buffer has no late count of its own */
	n = pr_rbleaf_step(&m->rbl[j], &next, &live, stop);
	pr_tree_set(&m->tree, m->n + j, next, live);
	pr_tree_update(&m->tree, m->n + j, next, live);
	return n;
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
 * refusal (a slow head, skewed times, too few records) doubles the wait.
 * A head past the pass's bound is no refusal: the pass is ending. */
static int batch(struct pr_merge *m, struct pr_sbuf *sb, bool *stop, uint64_t limit)
{
	const struct pr_tree_ent *w = pr_tree_winner(&m->tree);
	struct pr_batch *b = m->batch;
	bool unpaid = false;
	int n;

	if (!w || w->key > limit)
		return 0;
	n = pr_batch_run(b, m->cur, m->n, w->key, limit, sb, stop, &unpaid);
	if (n == -2) /* the bound is near: the steps end the pass */
		return 0;
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

/* Ring i won twice in a row: its whole run through the drain loop, up to
 * the runner-up or the pass's bound, whichever comes first. */
static int __attribute__((noinline)) run(struct pr_merge *m, uint32_t i, struct pr_sbuf *sb,
					 bool *stop, uint64_t limit)
{
	struct pr_run r = { .bound = pr_tree_second(&m->tree), .idx = i, .newest = m->newest,
			    .limit = UINT64_MAX };
	/* (limit + 1, 0) sorts after exactly the records with time <= limit:
	 * before the runner-up, the limit alone bounds the run (a cheaper check
	 * a record than a bound's). */
	const struct pr_tree_ent cap = { limit + 1, 0 };
	struct pr_cpu *c = &m->cpu[i];
	int n;

	if (limit != UINT64_MAX && pr_tree_less(cap, r.bound)) {
		r.bound = (struct pr_tree_ent){ UINT64_MAX, PR_TREE_DONE };
		r.limit = limit;
	}

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
	for (i = 0; i < m->nrb; i++)
		sum += m->rbl[i].rb->st.records;
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
	for (i = 0; i < m->nrb; i++) {
		if (!pr_rbuf_claim(m->rbl[i].rb)) {
			for (j = 0; j < i; j++)
				pr_rbuf_unclaim(m->rbl[j].rb);
			for (j = 0; j < m->n; j++)
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
	for (i = 0; i < m->nrb; i++)
		if (__atomic_load_n(&m->rbl[i].rb->busy, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* The pass's loop. bounded: the pass has a limit; budget: a max; rbs: ring
 * buffers' leaves (each a constant in each copy, so that an unbounded pass
 * pays no check for any). With a max or ring buffers, no batches. */
static inline __attribute__((always_inline)) int
merge_loop(struct pr_merge *m, struct pr_sbuf *sb, bool *stop, uint64_t limit, uint32_t max,
	   bool bounded, bool budget, bool rbs, bool *more)
{
	const struct pr_tree_ent *w;
	uint32_t i, last = UINT32_MAX, steps = 0;
	int n = 0;

	while (!*stop && (w = pr_tree_winner(&m->tree))) {
		if (bounded && (w->key > limit || (budget && (uint32_t)n >= max))) {
			*more = w->key <= limit;
			break;
		}
		i = w->idx;
		if (rbs && i >= m->n) {
			n += rb_step(m, i - m->n, w->key, stop);
			last = UINT32_MAX;
			continue;
		}
		if (i == last && !budget) {
			n += run(m, i, sb, stop, limit);
			last = UINT32_MAX;
			steps = 0;
		} else {
			n += step(m, i, w->key, sb, stop);
			last = i;
			steps++;
		}
		if (!*stop)
			head_key(m, i, sb, false);
		if (!budget && !rbs && !*stop && m->batch && steps >= m->batch->wait) {
			n += batch(m, sb, stop, limit);
			last = UINT32_MAX;
			steps = 0;
		}
	}
	return n;
}

static int __attribute__((noinline)) merge_all(struct pr_merge *m, struct pr_sbuf *sb, bool *stop)
{
	bool more = false;

	return merge_loop(m, sb, stop, UINT64_MAX, 0, false, false, false, &more);
}

/* A window's pass over the rings alone: the common bounded one. */
static int __attribute__((noinline)) merge_windowed(struct pr_merge *m, struct pr_sbuf *sb,
						    bool *stop, uint64_t limit, bool *more)
{
	return merge_loop(m, sb, stop, limit, 0, true, false, false, more);
}

/* Any other: a max, ring buffers, or both (limit UINT64_MAX: no window). */
static int __attribute__((noinline)) merge_general(struct pr_merge *m, struct pr_sbuf *sb,
						   bool *stop, uint64_t limit, uint32_t max,
						   bool *more)
{
	return merge_loop(m, sb, stop, limit, max, true, max != 0, m->nrb != 0, more);
}

int pr_merge_pass(struct pr_merge *m, struct pr_pass *p)
{
	struct pr_sbuf sb = { .shape = PR_SHAPE_ANY };
	const struct pr_tree_ent *w;
	uint64_t before, limit = UINT64_MAX;
	bool stop = false;
	uint32_t i;
	int n;

	p->stopped = p->more = false;
	p->kept = 0;
	if (!claim_all(m))
		return -EBUSY;
	/* T before any head: a record visible within the window of its time is
	 * then in its ring's snapshot if its time is at most T - W. */
	if (p->window)
		limit = pr_pass_limit(p->now ? p->now : pr_now_ns(), p->window);
	before = records_of(m);
	pr_window_begin(&m->win, m->cpu, m->n, m->newest);
	fill_tree(m, &sb, true);
	if (m->nrb)
		fill_rb(m, limit != UINT64_MAX);
	if (!p->max && !m->nrb)
		n = limit == UINT64_MAX ? merge_all(m, &sb, &stop) :
					  merge_windowed(m, &sb, &stop, limit, &p->more);
	else
		n = merge_general(m, &sb, &stop, limit, p->max, &p->more);
	/* Each ring is in time order: the smallest head is the oldest kept. */
	if (!stop && (w = pr_tree_winner(&m->tree)) && w->key > limit)
		p->kept = w->key;
	for (i = 0; i < m->n; i++) {
		fast_store(&m->cpu[i], &m->cur[i].k);
		pr_end(&m->cpu[i]);
		pr_cpu_unclaim(&m->cpu[i]);
	}
	for (i = 0; i < m->nrb; i++) {
		/* Records arrived that no wakeup announces: another pass soon. */
		p->more |= pr_rbleaf_end(&m->rbl[i]);
		pr_rbuf_unclaim(m->rbl[i].rb);
	}
	pr_window_end(&m->win, m->cpu, m->n, limit);
	m->records += records_of(m) - before;
	p->stopped = stop;
	p->more |= stop;
	return n;
}

int pr_merge_parse(struct pr_merge *m, bool *stopped)
{
	struct pr_pass p = { 0 };
	int n = pr_merge_pass(m, &p);

	if (stopped)
		*stopped = p.stopped;
	return n;
}
