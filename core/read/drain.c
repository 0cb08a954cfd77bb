/* SPDX-License-Identifier: MIT */
/* One ring's records to their callbacks: the fast loop, the slow step, and
 * the pull form. */
#include "read/drain.h"
#include "read/deliver.h"
#include "read/order.h"
#include "read/stretch.h"

#include <errno.h>

/* Whether a record with this time goes before the run's bound (and is not
 * past its limit). No run: all do. */
static inline bool within(const struct pr_run *run, uint64_t time)
{
	return !run || (pr_before(run->bound, run->idx, time) && time <= run->limit);
}

int __attribute__((noinline)) pr_slow_step(struct pr_cpu *c, struct pr_run *run)
{
	const struct perf_event_header *h = pr_peek(c);
	bool stop = false;
	uint64_t key;
	int n;

	if (!h)
		return 0;
	if (run) {
		key = pr_key_of(c, h);
		if (!within(run, key))
			return PR_STEP_BOUND;
		if (key)
			run->late += pr_late(&run->newest, key);
	}
	n = pr_dispatch(c, h, &stop);
	pr_ring_consume(&c->ring, h);
	return (n ? PR_STEP_SAMPLE : 0) | (stop ? PR_STEP_STOP : 0);
}

/* The late rule's state, kept in registers by the loop, back into run. */
static inline void run_sync(struct pr_run *run, uint64_t newest, uint64_t *late)
{
	if (!run)
		return;
	run->late += *late;
	*late = 0;
	run->newest = newest;
}

/* What a stretch of drain_loop tells it: the general path takes what
 * follows (0), or a PR_STEP_STOP or PR_STEP_BOUND. */
struct drain_arg {
	uint64_t *left;              /* records max still allows; NULL: no max */
	const volatile bool *cancel;
	struct pr_run *run;
	bool bounded;
	uint64_t newest, late;       /* the late rule's state (run only) */
};

/* k's stretch to its event's callback, decoded as shape. Inlined into one
 * function of its own per kind of drain (drain_fast), with shape, and
 * whether a->left, a->cancel and a->run are set, constant in each copy. */
static inline __attribute__((always_inline)) int
drain_stretch(enum pr_shape shape, struct pr_fast *k, const uint8_t *data, uint64_t mask,
	      struct drain_arg *a, bool limited, bool run, bool bounded, bool windowed)
{
	struct perfring_event *const ev = k->ev;
	/* On this function's stack, so that its address is no register; a
	 * fixed shape writes only its own fields, so the rest start at zero. */
	struct perfring_sample smp = { .event = ev };
	const struct perf_event_header *h;
	struct pr_stretch st;
	uint64_t n = 0;
	int why = 0;

	if (!pr_stretch_begin(&st, k, data, mask, shape))
		return 0;
	smp.id = st.id;
	while (__builtin_expect((h = pr_stretch_peek(&st)) != NULL, 1)) {
		if (limited && ((a->left && !*a->left) || (a->cancel && *a->cancel)))
			break;
		if (!pr_stretch_decode(&st, &ev->layout, shape, h, &smp))
			break;
		if (run) {
			/* bounded: a runner-up (which a window's limit may have
			 * replaced); windowed: no runner-up, only the limit. */
			if ((bounded && !pr_before(a->run->bound, a->run->idx, smp.time)) ||
			    (windowed && smp.time > a->run->limit)) {
				why = PR_STEP_BOUND;
				break;
			}
			a->late += pr_late(&a->newest, smp.time);
		}
		pr_stretch_take(&st);
		n++;
		if (limited && a->left)
			--*a->left;
		if (__builtin_expect(pr_event_call(ev, &smp), 0)) {
			why = PR_STEP_STOP;
			break;
		}
	}
	k->tail = pr_stretch_tail(&st, k);
	k->fast += n;
	return why;
}

/* Out of line, so that the stretch's loop has the registers to itself:
 * inlined into drain_loop, its state would share them with the loop
 * around it and be spilled around every callback. */
#define DRAIN_KIND(name, limited, run, bounded, windowed)                              \
	static int __attribute__((noinline))                                            \
	name(struct pr_fast *k, const uint8_t *data, uint64_t mask, struct drain_arg *a) \
	{                                                                                 \
		return PR_BY_SHAPE(k->ev->layout.shape, drain_stretch, k, data, mask, a,   \
				   limited, run, bounded, windowed);                        \
	}
DRAIN_KIND(drain_all, false, false, false, false)
DRAIN_KIND(drain_limited, true, false, false, false)
DRAIN_KIND(drain_run, false, true, false, false)
DRAIN_KIND(drain_run_bounded, false, true, true, false)
DRAIN_KIND(drain_run_windowed, false, true, false, true)
#undef DRAIN_KIND

/* A run's end: none (to the head), the runner-up, or a window's limit. */
enum { RUN_ALL, RUN_BOUND, RUN_WINDOW };

/* The fast path's stretch at k's tail, through the copy for this drain. */
static inline __attribute__((always_inline)) int
drain_fast(struct pr_fast *k, const uint8_t *data, uint64_t mask, struct drain_arg *a,
	   bool limited, bool run, int bounded)
{
	if (!k->ev)
		return 0;
	if (run)
		return bounded == RUN_BOUND ? drain_run_bounded(k, data, mask, a) :
		       bounded == RUN_WINDOW ? drain_run_windowed(k, data, mask, a) :
					       drain_run(k, data, mask, a);
	return limited ? drain_limited(k, data, mask, a) : drain_all(k, data, mask, a);
}

static inline bool drain_more(const struct pr_fast *k, uint64_t head, const struct drain_arg *a)
{
	return k->tail != head && !(a->left && !*a->left) && !(a->cancel && *a->cancel);
}

/* Delivers c's records up to its snapshot head: at most max (0 = all). In a
 * merge run (run set) it counts late records as the merge does, and when
 * bounded delivers only those that sort before the run's bound. The common
 * record, a sample of the same event as the last one, goes through a
 * stretch (read/stretch.h), one copy per shape. Always inlined, so each
 * caller gets a copy without the checks it does not need. */
static inline __attribute__((always_inline)) int
drain_loop(struct pr_cpu *c, uint32_t max,
	   const volatile bool *cancel, struct pr_run *run, int bounded, struct pr_sbuf *sb,
	   bool *stop)
{
	const uint8_t *data = c->ring.data;
	const uint64_t mask = c->ring.size - 1, head = c->ring.head;
	uint64_t left = max;
	struct drain_arg a = {
		.left = max ? &left : NULL, .cancel = cancel, .run = run, .bounded = bounded != RUN_ALL,
		.newest = run ? run->newest : 0,
	};
	struct pr_fast k;
	int n = 0, step;

	fast_load(c, &k, sb);
	while (drain_more(&k, head, &a)) {
		step = drain_fast(&k, data, mask, &a, max || cancel, run, bounded);
		if (step & PR_STEP_STOP)
			goto stopped;
		if ((step & PR_STEP_BOUND) || !drain_more(&k, head, &a))
			break;
		fast_store(c, &k);
		n += (int)k.fast;
		run_sync(run, a.newest, &a.late);
		step = pr_slow_step(c, run);
		a.newest = run ? run->newest : 0;
		fast_load(c, &k, sb);
		n += step & PR_STEP_SAMPLE;
		if (max && !(step & PR_STEP_BOUND))
			left--;
		if (step & PR_STEP_STOP)
			goto stopped;
		if (step & PR_STEP_BOUND)
			break;
	}
	fast_store(c, &k);
	run_sync(run, a.newest, &a.late);
	return n + (int)k.fast;
stopped:
	*stop = true;
	fast_store(c, &k);
	run_sync(run, a.newest, &a.late);
	return n + (int)k.fast;
}

int pr_drain(struct pr_cpu *c, uint32_t max, bool *more, const volatile bool *cancel)
{
	struct pr_sbuf sb = { .shape = PR_SHAPE_ANY };
	bool stop = false;
	int n;

	if (!pr_claim(c, pr_self())) {
		if (more)
			*more = false;
		return -EBUSY;
	}
	pr_begin(c);
	if (!max && !cancel)
		n = drain_loop(c, 0, NULL, NULL, RUN_ALL, &sb, &stop);
	else
		n = drain_loop(c, max, cancel, NULL, RUN_ALL, &sb, &stop);
	pr_end(c);
	if (more)
		*more = c->ring.tail != c->ring.head;
	pr_cpu_unclaim(c);
	return n;
}

int pr_drain_run(struct pr_cpu *c, struct pr_run *run, struct pr_sbuf *sb, bool *stop)
{
	/* Nothing else left to merge with: the plain loop, without bound checks,
	 * or with the window's limit alone. */
	if (run->bound.idx >= PR_TREE_DONE)
		return run->limit == UINT64_MAX ? drain_loop(c, 0, NULL, run, RUN_ALL, sb, stop) :
						  drain_loop(c, 0, NULL, run, RUN_WINDOW, sb, stop);
	return drain_loop(c, 0, NULL, run, RUN_BOUND, sb, stop);
}

int pr_pull_slow(struct pr_cpu *c, struct perfring_sample *smp, struct perfring_record *rec)
{
	const struct perf_event_header *h;
	int kind;

	while ((h = pr_peek(c))) {
		pr_ring_consume(&c->ring, h);
		kind = pr_decode(c, h, smp, rec);
		if (kind)
			return kind;
	}
	return 0;
}
