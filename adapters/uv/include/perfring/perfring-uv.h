/* SPDX-License-Identifier: MIT */
/*
 * libperfring-uv: run a perfring session on a libuv loop.
 *
 *   struct perfring_libuv *a;
 *   perfring_session_start(s);
 *   perfring_libuv_attach(s, loop, NULL, &a);   // callbacks now run from the loop
 *   uv_run(loop, UV_RUN_DEFAULT);
 *   ...
 *   perfring_libuv_detach(a, NULL, NULL);       // from anywhere, even a callback
 *
 * A driver for the core's reactor (perfring_reactor_new), which decides
 * everything: when to drain, continue a budgeted drain, flush, and stop
 * watching. The four operations, in libuv's terms:
 *   watch(slot, fd, on)  a uv_poll_t per watch: uv_poll_init and uv_poll_start,
 *                        then uv_close (a uv_poll_t cannot change its fd)
 *   soon(on)             a uv_idle_t, so other handles run between batches
 *   timer(ms)            a uv_timer_t, one-shot: the flush
 *   destroy()            uv_close on every handle made; the last close
 *                        callback frees the reactor, which calls detach's done
 * Handles reach the backend at the loop's next poll (PERFRING_LOOP_WATCH_LATE).
 * The timer and the idle handle are made at attach.
 *
 * Rules
 *  - Every callback of an attached session (samples, records, on_error) runs
 *    on the loop's thread. Do not parse the session from another thread while
 *    it is attached, and attach a session to one loop at a time.
 *  - Several sessions may be attached to one loop; each has its own handles.
 *  - The ring fds stay owned by the session: the adapter only watches them and
 *    never closes them.
 */
#ifndef PERFRING_PERFRING_UV_H
#define PERFRING_PERFRING_UV_H

#include <perfring/perfring.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One session attached to one libuv loop (opaque). */
struct perfring_libuv;

/** Attaches a started session s to loop: a uv_poll_t per ring fd (only the
 *  CPUs in opts->cpus, when given), a uv_timer_t that drains every ring each
 *  flush interval (none when that is never), and a uv_idle_t that continues
 *  drains cut short by opts->budget, so other handles run between batches.
 *  Records already waiting are drained before this returns, so callbacks may
 *  run from inside it; *out is set before they do. When a ring's fd reports
 *  HUP (a pid-mode task exited) or an error, the ring is drained one last
 *  time, its watcher stops and opts->on_error gets the CPU and the error
 *  (-EPIPE for HUP) once.
 *  Returns 0, or a negative errno with *out NULL: the reactor's errors (see
 *  perfring_reactor_new(); -EINVAL before start), -ENOMEM, or libuv's error
 *  (-EEXIST when one of the fds is already watched on this loop). On failure
 *  every handle made is closed; the next uv_run() releases them in one turn,
 *  without waiting, and the loop can then be closed. */
PERFRING_API int perfring_libuv_attach(struct perfring_session *s, uv_loop_t *loop,
				       const struct perfring_loop_opts *opts,
				       struct perfring_libuv **out);

/** Detaches: no callback of the session runs after this call, not even the
 *  rest of the drain in progress, and every handle is closed with uv_close().
 *  When the loop has run the last close callback, the adapter's memory is
 *  freed and then done(ctx) (may be NULL) is called once. Safe from inside
 *  any session or loop callback. Calling it again before done has run does
 *  nothing (done stays the first one); a is invalid once done has run.
 *  The session stays usable: records not yet delivered stay in the rings for
 *  a new attach or a direct parse. It may be freed once detach has returned
 *  (outside its callbacks), and the loop closed once done has run. */
PERFRING_API void perfring_libuv_detach(struct perfring_libuv *a, void (*done)(void *ctx),
					void *ctx);

#ifdef __cplusplus
}
#endif
#endif
