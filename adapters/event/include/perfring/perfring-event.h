/* SPDX-License-Identifier: MIT */
/*
 * libperfring-event: drive a perfring session from a libevent event_base.
 *
 * A driver for the core's reactor (perfring_reactor_new), which decides
 * everything: when to drain, continue a budgeted drain, flush, and stop
 * watching a fd that reported its end (drained one last time; on_error gets
 * that CPU and -EPIPE once). The four operations, in libevent's terms:
 *   watch(slot, fd, on)  an EV_READ|EV_PERSIST event: event_new + event_add /
 *                        event_free (safe inside its own callback)
 *   soon(on)             a zero-timeout timer event, so the base's other
 *                        events and timers run between batches
 *   timer(ms)            a one-shot timer event: the flush
 *   destroy()            frees the two timer events and the adapter
 *
 * Rules
 *  - Everything happens on the base's thread: attach, detach and every
 *    callback. A session attached to a loop must not also be parsed from
 *    another thread.
 *  - The fds stay owned by the session; the adapter never closes them. Detach
 *    before perfring_session_free() and before event_base_free().
 *  - Several sessions (or several attachments of one session on disjoint CPU
 *    sets) may share one base.
 *  - After detach the session is untouched and usable: attach it again or
 *    parse it directly; records left in the rings are not lost.
 */
#ifndef PERFRING_PERFRING_EVENT_H
#define PERFRING_PERFRING_EVENT_H

#include <perfring/perfring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

/** One session (or a CPU subset of it) attached to one event_base. Opaque. */
struct perfring_libevent;

/** Attaches started session s to base. opts (NULL = defaults) picks the CPUs,
 *  the per-callback budget, the flush interval and the on_error callback; see
 *  struct perfring_loop_opts. Before returning, every attached ring is drained
 *  once (registering a fd can consume a readiness that was already pending),
 *  so sample callbacks may run inside this call. On failure nothing stays
 *  registered or allocated and *out is NULL: -EINVAL (bad arguments or opts,
 *  session not started), -ENOENT (a CPU the session does not watch), -ENOMEM,
 *  or the errno of a failed event_add(). */
PERFRING_API int perfring_libevent_attach(struct perfring_session *s, struct event_base *base,
					  const struct perfring_loop_opts *opts,
					  struct perfring_libevent **out);

/** Stops delivery at once and removes every event from the base. Safe from
 *  any loop callback and from inside any perfring callback of this attachment
 *  (a sample callback, on_error): there the current drain ends after the
 *  record in hand, no further callback is made, and the memory is freed when
 *  the adapter's own callback returns. NULL is ignored. Calling it again
 *  before that deferred free (for instance twice from one callback) is a
 *  no-op; calling it on a pointer that has been freed is the caller's bug, so
 *  forget the pointer once detach has been called outside a callback. */
PERFRING_API void perfring_libevent_detach(struct perfring_libevent *a);

#ifdef __cplusplus
}
#endif
#endif
