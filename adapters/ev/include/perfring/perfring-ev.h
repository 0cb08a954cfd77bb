/* SPDX-License-Identifier: MIT */
/*
 * libperfring-ev: run a libperfring session on a libev loop.
 *
 * A driver for the core's reactor (perfring_reactor_new), which decides
 * everything: when to drain, continue a budgeted drain, flush, and stop
 * watching. The four operations, in libev's terms:
 *   watch(slot, fd, on)  an ev_io on the ring's fd: ev_io_start / ev_io_stop
 *   soon(on)             an ev_idle: it runs once the other watchers and due
 *                        timers have, so they get their turn between batches
 *   timer(ms)            an ev_timer, one-shot: the flush
 *   destroy()            frees the adapter (every watcher is stopped by then)
 * ev_io_start reaches the backend at the next loop iteration
 * (PERFRING_LOOP_WATCH_LATE). Only the multiplicity API is used: pass the
 * loop explicitly.
 *
 * Rules
 *  - A session attached to a loop must not also be parsed from another
 *    thread, and the loop must be run by one thread.
 *  - Several sessions may be attached to one loop.
 *  - The fds stay owned by the session: detach before perfring_session_free()
 *    and never close them. Detach leaves the session usable (parse it, or
 *    attach it again).
 *  - This header does not include <ev.h>; include it yourself.
 */
#ifndef PERFRING_PERFRING_EV_H
#define PERFRING_PERFRING_EV_H

#include <perfring/perfring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ev_loop;
/** One attachment of a session to a libev loop (opaque). */
struct perfring_libev;

/** Watches the session's rings (only opts->cpus when given; opts NULL =
 *  defaults) on `loop` and starts the flush timer unless the flush interval
 *  is 0 or PERFRING_FLUSH_NEVER. Each ring is drained once on the loop's next
 *  iteration, after libev has registered the fds (which consumes a pending
 *  readiness); no callback runs before this returns. A HUP or loop error on a CPU drains that ring, stops
 *  watching it and calls opts->on_error(cpu, err) once (-EPIPE for HUP).
 *  The session must be started. Returns 0 and sets *out, or a negative errno
 *  (-EINVAL, -ENOENT for a CPU the session does not watch, -ENOMEM) with
 *  nothing left attached; perfring_session_last_error() explains it. */
PERFRING_API int perfring_libev_attach(struct perfring_session *s, struct ev_loop *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libev **out);

/** Stops every watcher of `a` and frees it; NULL is ignored. Safe from inside
 *  any perfring callback (sample, record, on_error) or loop callback: then no
 *  further callback is made, the record in hand is the last one delivered
 *  (the rest stay in the ring for the next parse), and the memory is freed
 *  when the adapter's callback returns, so calling it again from callbacks
 *  until then is harmless. Outside callbacks `a` is freed at once. Does not
 *  stop the loop: ev_run returns when nothing else is active. */
PERFRING_API void perfring_libev_detach(struct perfring_libev *a);

#ifdef __cplusplus
}
#endif
#endif
