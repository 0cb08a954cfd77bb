/* SPDX-License-Identifier: MIT */
/* The loop-agnostic half of every adapter: what to do when a ring's fd is
 * ready, when to come back, when to stop watching, when to flush. */
#include "parse.h"
#include "sys.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct slot {
	struct pr_cpu *c;
	bool more;       /* a budgeted drain left records behind */
	bool hup;        /* HUP/ERR seen: unwatch once drained */
	bool unwatched;
};

/* What each readiness reads comes first, on one cache line: a wakeup finds
 * the cache cold, and every line read costs a miss. */
struct perfring_reactor {
	struct perfring_session *s;
	struct slot *slots;
	size_t n;
	uint32_t budget;        /* o.budget */
	int depth;              /* nesting of reactor calls on the stack */
	bool pid_mode;          /* rings of tasks, which HUP when those exit */
	bool free_pending;
	volatile bool cancelled;
	uint32_t flush_ms;      /* 0 = never */
	uint64_t last_flush_ns;
	struct perfring_cpu_fd *fds;
	struct perfring_loop_opts o;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int copy_loop_opts(struct perfring_session *s, const struct perfring_loop_opts *in,
			  struct perfring_loop_opts *o)
{
	int err = pr_opts_copy(s, "perfring_loop_opts", o, sizeof(*o), in);

	if (!err && !o->cpus != !o->cpu_cnt)
		return pr_err(s, -EINVAL, "perfring_loop_opts.cpus and cpu_cnt disagree");
	return err;
}

static uint32_t pick_flush_ms(const struct perfring_session *s, uint32_t want)
{
	if (!want)
		want = pr_wakeup_mode(s) ? s->o.flush_ms : s->o.poll_interval_ms;
	return want == PERFRING_FLUSH_NEVER ? 0 : want;
}

/* Adds s->cpu[idx] as slot r->n, refusing a CPU listed twice. */
static int add_slot(struct perfring_reactor *r, int idx)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->slots[i].c == &r->s->cpu[idx])
			return pr_err(r->s, -EINVAL, "perfring_loop_opts.cpus lists CPU %d twice",
				      r->s->cpu[idx].cpu);
	r->slots[r->n].c = &r->s->cpu[idx];
	r->fds[r->n] = r->s->fds[idx];
	r->n++;
	return 0;
}

static int fill_slots(struct perfring_reactor *r)
{
	size_t want = r->o.cpus ? r->o.cpu_cnt : r->s->ncpu, i;
	int idx, err;

	r->slots = pr_calloc(want ? want : 1, sizeof(*r->slots));
	r->fds = pr_calloc(want ? want : 1, sizeof(*r->fds));
	if (!r->slots || !r->fds)
		return pr_err(r->s, -ENOMEM, "out of memory attaching to a loop");
	for (i = 0; i < want; i++) {
		idx = r->o.cpus ? pr_cpu_index(r->s, r->o.cpus[i]) : (int)i;
		if (idx < 0)
			return pr_err(r->s, -ENOENT, "perfring_loop_opts.cpus: CPU %d is not "
				      "watched by the session", r->o.cpus[i]);
		if ((err = add_slot(r, idx)))
			return err;
	}
	return 0;
}

static void destroy(struct perfring_reactor *r)
{
	free(r->slots);
	free(r->fds);
	free(r);
}

PERFRING_API int perfring_reactor_new(struct perfring_session *s,
				      const struct perfring_loop_opts *opts,
				      struct perfring_reactor **out)
{
	struct perfring_reactor *r;
	int err;

	if (!s || !out)
		return pr_null(s, __func__, s ? "out" : "s");
	*out = NULL;
	if (s->state == PR_NEW)
		return pr_err(s, -EINVAL, "attach before perfring_session_start");
	r = pr_calloc(1, sizeof(*r));
	if (!r)
		return pr_err(s, -ENOMEM, "out of memory attaching to a loop");
	r->s = s;
	if ((err = copy_loop_opts(s, opts, &r->o)) || (err = fill_slots(r))) {
		destroy(r);
		return err;
	}
	r->o.cpus = NULL;
	r->flush_ms = pick_flush_ms(s, r->o.flush_ms);
	r->pid_mode = s->o.pid > 0;
	r->budget = r->o.budget;
	r->last_flush_ns = now_ns();
	*out = r;
	return 0;
}

PERFRING_API void perfring_reactor_free(struct perfring_reactor *r)
{
	if (!r)
		return;
	r->cancelled = true;
	if (r->depth)
		r->free_pending = true;
	else
		destroy(r);
}

PERFRING_API size_t perfring_reactor_fds(const struct perfring_reactor *r,
					 const struct perfring_cpu_fd **out)
{
	if (out)
		*out = r ? r->fds : NULL;
	return r ? r->n : 0;
}

static void unwatch(struct perfring_reactor *r, struct slot *sl, int err)
{
	if (sl->unwatched)
		return;
	sl->unwatched = true;
	sl->more = false;
	sl->c->st.hup = 1;
	if (r->o.on_error && !r->cancelled)
		r->o.on_error(sl->c->cpu, err, r->o.ctx);
}

static uint32_t verdict_of(const struct slot *sl)
{
	return (sl->more ? PERFRING_REACT_MORE : 0) | (sl->unwatched ? PERFRING_REACT_UNWATCH : 0);
}

/* Returns true when r was freed from inside a callback (the caller must not
 * touch it again). */
static bool leave(struct perfring_reactor *r)
{
	if (--r->depth == 0 && r->free_pending) {
		destroy(r);
		return true;
	}
	return false;
}

static int drain(struct perfring_reactor *r, struct slot *sl)
{
	int n;

	r->depth++;
	n = pr_parse_ring(r->s, sl->c, r->budget, &sl->more, &r->cancelled);
	if (r->cancelled)
		sl->more = false;
	return n;
}

/* Some loops (libev, libevent's epoll backend) fold POLLHUP into "readable",
 * and a per-task ring HUPs forever once its task is gone. Only pid mode has
 * such rings. Polling before the drain is safe: perf readiness is one-shot,
 * but whatever it reports here the drain that follows reads. */
static uint32_t with_hup(struct perfring_reactor *r, size_t slot, uint32_t revents)
{
	struct pollfd p;

	/* Touches nothing else in the common case: each wakeup finds the
	 * cache cold, and every line read costs a miss. */
	if (!r->pid_mode || !(revents & POLLIN) || (revents & (POLLHUP | POLLERR)))
		return revents;
	p = (struct pollfd){ .fd = r->fds[slot].fd, .events = POLLIN };
	if (poll(&p, 1, 0) == 1)
		revents |= (uint32_t)p.revents & (POLLHUP | POLLERR);
	return revents;
}

PERFRING_API int perfring_reactor_ready(struct perfring_reactor *r, size_t slot,
					uint32_t revents, uint32_t *verdict)
{
	struct slot *sl;
	uint32_t v;
	int n;

	if (verdict)
		*verdict = 0;
	if (!r)
		return pr_null(NULL, __func__, "r");
	if (slot >= r->n)
		return pr_err(r->s, -EINVAL, "reactor_ready: slot %zu of %zu", slot, r->n);
	sl = &r->slots[slot];
	if (r->cancelled || sl->unwatched)
		return 0;
	revents = with_hup(r, slot, revents);
	if (revents & POLLIN)
		sl->c->st.wakeups++;
	if (revents & (POLLHUP | POLLERR))
		sl->hup = true;
	n = drain(r, sl);
	if (sl->hup && !sl->more && !r->cancelled)
		unwatch(r, sl, (revents & POLLERR) ? -EIO : -EPIPE);
	v = verdict_of(sl);
	if (leave(r))
		v = PERFRING_REACT_UNWATCH;
	if (verdict)
		*verdict = v;
	return n;
}

PERFRING_API void perfring_reactor_fail(struct perfring_reactor *r, size_t slot, int err)
{
	if (!r || slot >= r->n)
		return;
	r->depth++; /* on_error may free r: that must wait until we return */
	unwatch(r, &r->slots[slot], err < 0 ? err : -err);
	leave(r);
}

PERFRING_API int perfring_reactor_flush(struct perfring_reactor *r, size_t *more_slots)
{
	size_t i, more = 0;
	long total = 0;

	if (!r)
		return pr_null(NULL, __func__, "r");
	r->last_flush_ns = now_ns();
	for (i = 0; i < r->n && !r->cancelled; i++) {
		if (r->slots[i].unwatched)
			continue;
		r->slots[i].c->st.flushes++;
		total += drain(r, &r->slots[i]);
		more += r->slots[i].more;
		if (leave(r))
			return (int)total;
	}
	if (more_slots)
		*more_slots = more;
	return (int)total;
}

PERFRING_API bool perfring_reactor_pending(const struct perfring_reactor *r, size_t slot)
{
	return r && slot < r->n && r->slots[slot].more && !r->cancelled;
}

PERFRING_API uint32_t perfring_reactor_flush_ms(const struct perfring_reactor *r)
{
	return r ? r->flush_ms : 0;
}

PERFRING_API int perfring_reactor_next_flush_ms(const struct perfring_reactor *r)
{
	uint64_t due, now;

	if (!r || !r->flush_ms)
		return -1;
	due = r->last_flush_ns + (uint64_t)r->flush_ms * 1000000ull;
	now = now_ns();
	return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

PERFRING_API bool perfring_reactor_busy(const struct perfring_reactor *r)
{
	return r && r->depth > 0;
}

PERFRING_API void perfring_reactor_cancel(struct perfring_reactor *r)
{
	if (r)
		r->cancelled = true;
}
