/* SPDX-License-Identifier: MIT */
/* The merged parse loops: sleep-polling by default, or blocking on the
 * kernel's wakeups through the session's epoll set. */
#include "parse.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <time.h>

#define NS_PER_MS 1000000ull
#define MAX_EVENTS 64

struct loop {
	uint64_t deadline;          /* CLOCK_MONOTONIC ns; UINT64_MAX = none */
	bool (*should_stop)(void *ctx);
	void *ctx;
	long total;
	bool stopped;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool done(struct loop *l)
{
	if (l->stopped || (l->should_stop && l->should_stop(l->ctx)))
		return true;
	return l->deadline != UINT64_MAX && now_ns() >= l->deadline;
}

/* A timer-driven pass over every ring. Returns the records it read. */
static uint64_t pass(struct perfring_session *s, struct loop *l)
{
	uint64_t before = s->merged_records;
	size_t i;

	l->total += pr_parse_merged(s, &l->stopped);
	for (i = 0; i < s->ncpu; i++)
		s->cpu[i].st.flushes++;
	return s->merged_records - before;
}

/* ms to wait: the smaller of `want` (-1 = forever) and the deadline. Rounds
 * up, so that a wait never ends just short of its goal and spins. */
static int bounded_ms(const struct loop *l, int64_t want_ns)
{
	uint64_t left = want_ns < 0 ? UINT64_MAX : (uint64_t)want_ns, now, until;

	if (l->deadline != UINT64_MAX) {
		now = now_ns();
		until = l->deadline > now ? l->deadline - now : 0;
		if (until < left)
			left = until;
	}
	if (left == UINT64_MAX)
		return -1;
	left = (left + NS_PER_MS - 1) / NS_PER_MS;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static struct timespec ts_of_ms(uint32_t ms)
{
	return (struct timespec){ (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
}

static void sleep_ms(int ms)
{
	struct timespec ts = ts_of_ms((uint32_t)ms);

	nanosleep(&ts, NULL);
}

static void poll_loop(struct perfring_session *s, struct loop *l)
{
	int ms;

	while (!done(l)) {
		if (pass(s, l))
			continue;
		if (done(l))
			break;
		ms = bounded_ms(l, (int64_t)s->o.poll_interval_ms * (int64_t)NS_PER_MS);
		if (ms > 0)
			sleep_ms(ms);
	}
}

/* Marks the rings that fired (*rings: some did) and says whether the flush
 * timer did; a HUP/ERR ring leaves the epoll set, since a level-triggered
 * wait would report it forever. Returns rings still live. */
static size_t note_ready(struct perfring_session *s, const struct epoll_event *ev, int n,
			 bool *rings, bool *flush)
{
	uint64_t ticks;
	struct pr_cpu *c;
	size_t i, live = 0;
	int k;

	for (k = 0; k < n; k++) {
		if (ev[k].data.u64 == PR_FLUSH_TOKEN) {
			*flush = read(s->tfd, &ticks, sizeof(ticks)) == sizeof(ticks);
			continue;
		}
		*rings = true;
		c = &s->cpu[ev[k].data.u64];
		c->st.wakeups++;
		if ((ev[k].events & (EPOLLHUP | EPOLLERR)) && !c->st.hup) {
			c->st.hup = 1;
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->leader_fd, NULL);
		}
	}
	for (i = 0; i < s->ncpu; i++)
		live += !s->cpu[i].st.hup;
	return live;
}

/* A periodic flush_ms timer, or none (ms 0). Disarming also consumes a
 * tick that came due after the last wait, which would otherwise wake the
 * next loop at once. */
static void arm_flush(struct perfring_session *s, uint32_t ms)
{
	struct itimerspec its = { ts_of_ms(ms), ts_of_ms(ms) };
	uint64_t ticks;

	timerfd_settime(s->tfd, 0, &its, NULL);
	if (!ms && read(s->tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		ticks = 0; /* EAGAIN: none was */
}

static void epoll_loop(struct perfring_session *s, struct loop *l)
{
	struct epoll_event ev[MAX_EVENTS];
	bool flush, rings, live = true;
	int n;

	arm_flush(s, s->o.flush_ms == PERFRING_FLUSH_NEVER ? 0 : s->o.flush_ms);
	pass(s, l);
	while (live && !done(l)) {
		n = epoll_wait(s->epfd, ev, MAX_EVENTS, bounded_ms(l, -1));
		if (n < 0 && errno != EINTR)
			break;
		flush = rings = false;
		live = note_ready(s, ev, n > 0 ? n : 0, &rings, &flush) > 0;
		/* Drain every ring, not just those that fired, to keep time order
		 * (a flush pass drains them all too). */
		if (flush)
			pass(s, l);
		else if (rings)
			l->total += pr_parse_merged(s, &l->stopped);
	}
	arm_flush(s, 0);
}

static int run(struct perfring_session *s, struct loop *l)
{
	if (!s)
		return pr_null(NULL, "parse loop", "s");
	if (s->state == PR_NEW)
		return pr_err(s, -EINVAL, "parse before perfring_session_start");
	if (pr_wakeup_mode(s))
		epoll_loop(s, l);
	else
		poll_loop(s, l);
	return l->total > INT_MAX ? INT_MAX : (int)l->total;
}

PERFRING_API int perfring_session_parse_for_duration(struct perfring_session *s, uint64_t ns)
{
	uint64_t now = now_ns();
	struct loop l = { .deadline = ns > UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + ns };

	return run(s, &l);
}

PERFRING_API int perfring_session_parse_until(struct perfring_session *s,
					      bool (*should_stop)(void *ctx), void *ctx)
{
	struct loop l = { .deadline = UINT64_MAX, .should_stop = should_stop, .ctx = ctx };

	if (!should_stop)
		return pr_null(s, __func__, "should_stop");
	return run(s, &l);
}
