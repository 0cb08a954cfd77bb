/* SPDX-License-Identifier: MIT */
/* The session's own waits, parse_for_duration and parse_until: sleep-polling
 * by default, or the built-in epoll driver under a merged reactor. */
#include "loop/epoll.h"
#include "loop/reactor.h"
#include "read/merge.h"
#include "snapshot.h"
#include "base/clock.h"
#include "base/sys.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#define NS_PER_MS PR_NS_PER_MS

struct loop {
	struct perfring_session *s;
	uint64_t deadline;          /* CLOCK_MONOTONIC ns; UINT64_MAX = none */
	bool (*should_stop)(void *ctx);
	void *ctx;
	long total;
	bool stopped;
};

static bool done(struct loop *l)
{
	if (pr_session_closing(l->s))
		return true;
	if (l->stopped || (l->should_stop && l->should_stop(l->ctx)))
		return true;
	return l->deadline != UINT64_MAX && pr_now_ns() >= l->deadline;
}

/* A timer-driven pass over every ring. Returns the records it read; *due:
 * when the oldest record the window kept must go (UINT64_MAX: none kept).
 * all: nothing younger can come (a stop, the process's end), so what the
 * window kept goes now. */
static uint64_t pass(struct perfring_session *s, struct loop *l, uint64_t *due, bool all)
{
	struct pr_pass p = { .window = all || s->state == PR_STOPPED ? 0 : s->o.order_window_ns };
	uint64_t before = s->merge->records;
	size_t i;
	int n;

	n = pr_merge_pass(s->merge, &p);
	l->stopped |= p.stopped;
	l->total += n > 0 ? n : 0; /* -EBUSY: another parse holds a ring (R1) */
	for (i = 0; i < s->ncpu; i++)
		if (pr_cpu_on(&s->cpu[i])) /* an offline CPU (hotplug) has no ring */
			PR_STAT_ADD(&s->cpu[i], flushes, 1);
	*due = p.kept ? pr_pass_due(p.kept, p.window) : UINT64_MAX;
	return s->merge->records - before;
}

/* ms to wait: the smaller of `want` (-1 = forever) and the deadline. Rounds
 * up, so that a wait never ends just short of its goal and spins. */
static int bounded_ms(const struct loop *l, int64_t want_ns)
{
	uint64_t left = want_ns < 0 ? UINT64_MAX : (uint64_t)want_ns, now, until;

	if (l->deadline != UINT64_MAX) {
		now = pr_now_ns();
		until = l->deadline > now ? l->deadline - now : 0;
		if (until < left)
			left = until;
	}
	if (left == UINT64_MAX)
		return -1;
	left = (left + NS_PER_MS - 1) / NS_PER_MS;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static void sleep_ms(int ms)
{
	struct timespec ts = pr_ts_of_ms((uint32_t)ms);

	nanosleep(&ts, NULL);
}

/* R2 (docs/RULES.md) in the polling wait: a pid-mode session's wait ends
 * once the whole process has exited (its pidfd says so), after one more
 * pass, which reads all it wrote; each ring's end is then reported
 * (stats.hup), as the reactors report it. Looked at after an empty pass
 * only. */
static bool process_ended(struct perfring_session *s, struct loop *l)
{
	uint64_t due;
	size_t i;

	if (s->o.pid <= 0 || !pr_session_process_gone(s))
		return false;
	pass(s, l, &due, true);
	for (i = 0; i < s->ncpu; i++)
		PR_STAT_SET(&s->cpu[i], hup, 1);
	return true;
}

/* The sleep before the next pass: the poll interval, or less when a kept
 * record is due sooner (bounded latency: its time + the window). */
static int64_t nap_ns(const struct perfring_session *s, uint64_t due)
{
	int64_t ns = (int64_t)s->o.poll_interval_ms * (int64_t)NS_PER_MS;
	uint64_t now;

	if (due == UINT64_MAX)
		return ns;
	now = pr_now_ns();
	if (due <= now)
		return 0;
	return due - now < (uint64_t)ns ? (int64_t)(due - now) : ns;
}

static void poll_loop(struct perfring_session *s, struct loop *l)
{
	uint64_t due;
	int ms, n;

	while (!done(l)) {
		if ((n = pr_session_tick(s)) > 0)
			l->total += n;
		if (pass(s, l, &due, false))
			continue;
		if (done(l) || process_ended(s, l))
			break;
		ms = bounded_ms(l, nap_ns(s, due));
		if (ms > 0)
			sleep_ms(ms);
	}
}

/* The built-in wait of wakeup mode: a merged reactor on the epoll driver,
 * made on the first wait and kept until the session goes. */
struct pr_wait {
	struct pr_attachment att;
	struct pr_epoll d;          /* d.r: the reactor */
};

static void wait_release(struct pr_attachment *a)
{
	struct pr_wait *w = (struct pr_wait *)((char *)a - offsetof(struct pr_wait, att));

	if (w->d.r) /* the session is being freed: no callback now */
		w->d.r->drop_kept = true;
	perfring_reactor_free(w->d.r);
	pr_epoll_close(&w->d);
	free(w);
}

static struct pr_wait *wait_of(struct perfring_session *s)
{
	struct pr_attachment *a;

	for (a = s->attached; a; a = a->next)
		if (a->release == wait_release)
			return (struct pr_wait *)((char *)a - offsetof(struct pr_wait, att));
	return NULL;
}

static int wait_make(struct perfring_session *s, struct pr_wait **out)
{
	struct pr_wait *w = pr_calloc(1, sizeof(*w));
	int err;

	if (!w)
		return pr_err(&s->err, -ENOMEM, "out of memory for the session's wait");
	w->att.release = wait_release;
	/* On failure the reactor calls the driver's destroy, which owns nothing. */
	if ((err = pr_epoll_open(&w->d, &s->err)) ||
	    (err = pr_reactor_make(s, NULL, &pr_epoll_ops, &w->d, true, &w->d.r))) {
		pr_epoll_close(&w->d);
		free(w);
		return err;
	}
	pr_attach(s, &w->att);
	*out = w;
	return 0;
}

/* fresh: the reactor was just made, and its making drained every ring. */
static void epoll_loop(struct pr_wait *w, struct loop *l, bool fresh)
{
	if (!fresh)
		perfring_reactor_on_timer(w->d.r);
	for (;;) {
		l->total += (long)pr_reactor_read_samples_reset(w->d.r);
		l->stopped |= pr_reactor_read_stop_reset(w->d.r);
		if (!pr_reactor_live(w->d.r) || done(l))
			break;
		if (pr_epoll_turn(&w->d, bounded_ms(l, -1)) < 0)
			break;
	}
}

static int run(struct perfring_session *s, struct loop *l)
{
	struct pr_wait *w;
	bool fresh;
	int err;

	if (!s)
		return pr_null(NULL, "parse loop", "s");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "parse before perfring_session_start");
	if ((err = pr_overwrite_refuse(s, "parse_for_duration and parse_until")))
		return err;
	if (pr_merge_busy(s->merge))
		return pr_session_busy(s);
	l->s = s;
	pr_session_enter(s);
	if (!pr_wakeup_mode(s)) {
		poll_loop(s, l);
	} else {
		w = wait_of(s);
		fresh = !w;
		if (!w && (err = wait_make(s, &w)))
			return pr_session_leave(s) ? -ECANCELED : err;
		epoll_loop(w, l, fresh);
	}
	/* Freed inside a callback (R7): the session went with this call. */
	if (pr_session_leave(s))
		return -ECANCELED;
	return l->total > INT_MAX ? INT_MAX : (int)l->total;
}

PERFRING_API int perfring_session_parse_for_duration(struct perfring_session *s, uint64_t ns)
{
	uint64_t now = pr_now_ns();
	struct loop l = { .deadline = ns > UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + ns };

	return run(s, &l);
}

PERFRING_API int perfring_session_parse_until(struct perfring_session *s,
					      bool (*should_stop)(void *ctx), void *ctx)
{
	struct loop l = { .deadline = UINT64_MAX, .should_stop = should_stop, .ctx = ctx };

	if (!should_stop)
		return pr_null(pr_serr(s), __func__, "should_stop");
	return run(s, &l);
}
