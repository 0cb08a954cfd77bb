/* SPDX-License-Identifier: MIT */
/*
 * The reactor: a started session on any event loop, and what a driver
 * writer needs (struct perfring_loop_ops and the perfring_reactor_on_* calls).
 * The adapters (perfring-uv.h, perfring-event.h, perfring-ev.h) are drivers.
 */
#ifndef PERFRING_REACTOR_H
#define PERFRING_REACTOR_H

#include <perfring/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options for attaching a session to an event loop (the adapters and
 *  perfring_reactor_new()). NULL = defaults. */
struct perfring_loop_opts {
	size_t sz;                 /**< sizeof(struct perfring_loop_opts) */
	const int *cpus;           /**< subset of the session's CPUs; NULL = all */
	size_t cpu_cnt;
	uint32_t budget;           /**< max records per callback; 0 = drain fully */
	uint32_t flush_ms;         /**< drain every ring this often even without a
	                                wakeup; 0 = the session's flush_ms (wakeup
	                                mode) or poll_interval_ms (default mode);
	                                PERFRING_FLUSH_NEVER = never */
	void (*on_error)(int cpu, int err, void *ctx); /**< HUP (-EPIPE) or an
	                                error (-EIO) on a CPU's fd: that fd is no
	                                longer watched; or the loop refused a soon
	                                turn (that CPU's records wait for the next
	                                flush) or, with cpu -1, re-arming the timer */
	void *ctx;
	uint64_t order_window_ns;  /**< 0 = per ring, as it comes; non-zero: the
	                                reactor delivers in time order across its
	                                rings and timed ring buffers, holding
	                                records back at most this window (see
	                                "Time order with a bound" in
	                                <perfring/parse.h>: the timer, budget,
	                                stop, HUP and free) */
};

/*
 * The reactor: a started session on any event loop. It owns every rule of
 * the loop: when to drain a ring, when to come back to a drain the budget cut
 * short, when to flush, the drain after attaching, when to stop watching a
 * fd that reported its end (HUP, after a last drain), and when to free. A
 * loop is four operations, which a driver translates into its own calls:
 *
 *   watch(loop, slot, fd, on)  start (on) or stop reporting fd's readability
 *                              as `slot`: call perfring_reactor_on_ready(r,
 *                              slot, revents) when it is readable
 *   soon(loop, on)             call perfring_reactor_on_soon(r) once on a
 *                              coming loop turn, after other ready watchers
 *                              and due timers (an idle or zero timer); !on:
 *                              cancel
 *   timer(loop, ms)            call perfring_reactor_on_timer(r) once after
 *                              ms; 0 = disarm. One timer: re-arming replaces it
 *   destroy(loop)              release what the driver made (it may finish
 *                              later, as uv_close does), then call
 *                              perfring_reactor_destroyed(r)
 *
 * Each returns 0 or a negative errno (destroy returns nothing). The reactor
 * calls them only from perfring_reactor_* calls on the loop's thread, and
 * never calls a watched slot's watch(on) twice. A driver of about 90 lines
 * is enough: see examples/epoll-driver.c (examples/epoll-reactor.c runs it)
 * and the three adapters.
 *
 * Readiness on perf fds is one-shot and registering a fd (epoll_ctl ADD)
 * consumes one already pending: the reactor drains every ring when created.
 * A loop that registers fds only when it next polls (libuv, libev) says so
 * with PERFRING_LOOP_WATCH_LATE, and the reactor drains every ring again on
 * its first two soon() turns, one of which comes after the registration.
 */
struct perfring_reactor;

struct perfring_loop_ops {
	size_t sz;                 /**< sizeof(struct perfring_loop_ops) */
	int (*watch)(void *loop, size_t slot, int fd, bool on);
	int (*soon)(void *loop, bool on);
	int (*timer)(void *loop, uint32_t ms);
	void (*destroy)(void *loop);
	uint32_t flags;            /**< PERFRING_LOOP_* */
};

/** watch() takes effect at the loop's next poll, not at once. */
#define PERFRING_LOOP_WATCH_LATE (1u << 0)

/** Attaches started session s to a loop through ops, with opts (NULL =
 *  defaults): watches every slot's fd (one per CPU of opts->cpus, in that
 *  order, else every CPU of the session in order: slot i is the i-th),
 *  arms the flush timer (opts->flush_ms, else the session's flush_ms in
 *  wakeup mode or poll_interval_ms in default mode; none for
 *  PERFRING_FLUSH_NEVER) and drains every ring once. *out is set before
 *  any callback of the session runs, so a callback may free r.
 *  A session following hotplug (opts.follow_hotplug) has a slot per
 *  possible CPU (an offline one is not watched) and one more, after them,
 *  for its hotplug notifier, a socket watched like a ring's fd; size the
 *  driver's per-slot state with perfring_session_slots(). A slot whose CPU
 *  went offline is unwatched, and when it comes back watched again with
 *  a new fd.
 *  -EINVAL for NULL s, ops or out, or ops without one of its four
 *  functions or with sz too small: then no operation is called. Any other
 *  failure (-EINVAL before start or for bad opts, -ENOENT for a CPU the
 *  session does not watch, -ENOMEM, or the error an operation returned)
 *  calls ops->destroy(loop) before it returns, with *out already NULL (so
 *  the driver's perfring_reactor_destroyed(NULL) does nothing), so a driver
 *  releases its state in destroy() alone. */
PERFRING_API int perfring_reactor_new(struct perfring_session *s,
				      const struct perfring_loop_opts *opts,
				      const struct perfring_loop_ops *ops, void *loop,
				      struct perfring_reactor **out);

/** The driver: slot's fd is ready. revents holds POLLIN, POLLHUP and
 *  POLLERR bits as the loop reports them (some loops fold a HUP into
 *  "readable": in pid mode the reactor asks poll(2) itself). The reactor
 *  drains the ring (budget records at most, then again on soon()); after a
 *  HUP or an error it drains the ring to its end, stops watching it and
 *  calls opts->on_error(cpu, -EPIPE or -EIO) once. */
PERFRING_API void perfring_reactor_on_ready(struct perfring_reactor *r, size_t slot,
					    uint32_t revents);
/** The driver: the turn asked for with soon(loop, true) has come. */
PERFRING_API void perfring_reactor_on_soon(struct perfring_reactor *r);
/** The driver: the timer armed with timer(loop, ms) has expired. */
PERFRING_API void perfring_reactor_on_timer(struct perfring_reactor *r);

/** Stops every watch, the soon turn and the timer at once, so no callback of
 *  the session runs after this call, not even the rest of the drain in
 *  progress; then calls the driver's destroy() once (when the outermost
 *  perfring_reactor_* call returns, if called from inside one), and frees r
 *  when the driver calls perfring_reactor_destroyed(). Safe inside any
 *  callback; a second call, and a call with NULL, do nothing. */
PERFRING_API void perfring_reactor_free(struct perfring_reactor *r);
/** As perfring_reactor_free, then done(ctx) (may be NULL) once r is freed,
 *  after the driver's perfring_reactor_destroyed(). A call while r is
 *  already being freed does nothing: done stays the first call's. */
PERFRING_API void perfring_reactor_free_then(struct perfring_reactor *r, void (*done)(void *ctx),
					     void *ctx);
/** The driver: destroy() has finished (from inside destroy() or later).
 *  r is invalid after it. NULL does nothing. */
PERFRING_API void perfring_reactor_destroyed(struct perfring_reactor *r);

/** The slots a reactor of s may use: one per CPU of the session's set (for
 *  a following session, every possible CPU) plus, when following, one for
 *  the hotplug notifier, plus one per BPF ring buffer (after them, in the
 *  order added: perfring_session_add_bpf_ringbuf). A driver sizes its
 *  per-slot state with it, not with perfring_session_fds(), whose count
 *  changes. 0 for NULL. */
PERFRING_API size_t perfring_session_slots(const struct perfring_session *s);

#ifdef __cplusplus
}
#endif
#endif
