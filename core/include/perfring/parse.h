/* SPDX-License-Identifier: MIT */
/*
 * Reading a started session: level 2 (one CPU's ring when its fd is ready),
 * the pull forms, per-CPU stats, CPU hotplug, and level 1 (time-ordered
 * parses across CPUs that wait for the kernel or sleep).
 */
#ifndef PERFRING_PARSE_H
#define PERFRING_PARSE_H

#include <perfring/common.h>
#include <perfring/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------- level 2: per-CPU fds */

struct perfring_cpu_fd { int cpu; int fd; };

/** The {cpu, fd} pairs of the watched CPUs, sorted by CPU: one per ring, only
 *  for CPUs in opts.cpus. The fds are owned by the session and stay valid
 *  until perfring_session_free(); never close them. With follow_hotplug only
 *  the CPUs open now are listed: an offline CPU's fd is closed, and the
 *  array changes at each change (read it again after the cpu callback). Returns the count (0
 *  before start). Readiness on them is one-shot: drain the ring to its head on
 *  each wakeup (or come back without one, see parse_for_cpu_n). */
PERFRING_API size_t perfring_session_fds(const struct perfring_session *s,
					 const struct perfring_cpu_fd **out);

/** The fd of `cpu`'s ring, or -ENOENT if the session does not watch it. */
PERFRING_API int perfring_session_fd_for_cpu(const struct perfring_session *s, int cpu);

/** Drains only `cpu`'s ring, firing callbacks; never sleeps or blocks.
 *  Returns the samples handled, -ENOENT, -EBUSY while another parse holds
 *  that ring (R1; this thread's own uncommitted pull batch is committed
 *  instead), or -ECANCELED when a callback freed the session (R7). Safe
 *  concurrently with calls for other CPUs. */
PERFRING_API int perfring_session_parse_for_cpu(struct perfring_session *s, int cpu);

/** As parse_for_cpu, handling at most `max` records (samples and kernel
 *  records; 0 = no limit). *more (may be NULL) is set when records remain:
 *  the fd will not fire again for them, so the caller must come back. */
PERFRING_API int perfring_session_parse_for_cpu_n(struct perfring_session *s, int cpu,
						  uint32_t max, bool *more);

/*
 * Pull form ("drain_cpu"): iterate one CPU's records yourself.
 *   while ((k = perfring_cpu_next(s, cpu, &smp, &rec)) > 0) { ... }
 *   perfring_cpu_commit(s, cpu);
 * perfring_cpu_next() returns PERFRING_NEXT_SAMPLE with *sample filled,
 * PERFRING_NEXT_RECORD with *rec filled (a kernel record), 0 when the ring is
 * empty (as of the first next since the last commit) or -errno. Callbacks are
 * not called. The returned data stays valid until the next call of either
 * function (or perfring_cpu_pull) for that CPU. Each record costs a call;
 * perfring_cpu_pull below takes many a call (costs: docs/API-NOTES.md).
 * perfring_cpu_commit() hands everything returned so far back to the kernel (a
 * release store of data_tail); until then that space stays reserved. At the
 * end of what it saw, next reads the head again, so a next that returned 0
 * needs no commit to see records written later; a 0 with nothing uncommitted
 * ends the batch. A pull batch holds its ring until the commit (R1): other
 * threads' parses of it get -EBUSY, while a parse of the same CPU by the
 * thread that pulled commits the batch. Stats count records as they are
 * returned.
 */
#define PERFRING_NEXT_SAMPLE 1
#define PERFRING_NEXT_RECORD 2
PERFRING_API int perfring_cpu_next(struct perfring_session *s, int cpu,
				   struct perfring_sample *sample, struct perfring_record *rec);
PERFRING_API int perfring_cpu_commit(struct perfring_session *s, int cpu);

/*
 * Batch pull: many records of one CPU a call, for loops (and bindings) that
 * consume records themselves.
 *   struct perfring_item it[64];
 *   while ((n = perfring_cpu_pull(s, cpu, it, 64)) > 0)
 *       for (i = 0; i < n; i++) ... it[i].kind, it[i].u.sample or it[i].u.record ...
 *   perfring_cpu_commit(s, cpu);
 * Fills up to max items, each a sample (kind PERFRING_NEXT_SAMPLE, u.sample)
 * or a kernel record (PERFRING_NEXT_RECORD, u.record) decoded as the
 * callbacks would see it, in ring order, and returns how many: 0 when the
 * ring is empty, or -errno: -EINVAL for max 0 (which could not tell "empty"
 * from "no room"), -ENOENT, -EBUSY (R1, as for perfring_cpu_next), and
 * -ECANCELED (R7). Callbacks are not called. Every field of a returned item
 * up to u.sample.record is set (those the event's sample_type lacks are
 * zero); stream_id and the profiler's fields, after it, only when the
 * event's sample_type has their bit (see struct perfring_sample; why:
 * docs/API-NOTES.md).
 * perfring_cpu_pull_opts() with PERFRING_PULL_PRESENT_ONLY leaves out the
 * zeros up to record too.
 * Each pull sees every record written before it began that has not been
 * returned yet; a pull that returns fewer than max found the ring empty.
 * The items, and whatever they point to, stay valid until the next pull,
 * next or commit of that CPU (or a parse of it by this thread, which
 * commits). perfring_cpu_commit() hands everything returned so far back to
 * the kernel; until then that space stays reserved, so commit once the
 * items are used, or the kernel starts dropping. A pull that returns 0 ends
 * the batch itself: what was returned before is committed (it was valid
 * only until this pull) and the ring is free for other threads, so a loop
 * that pulls until 0 needs no commit at all, and sees later records at its
 * next pull.
 * Records are not copied, except the few that wrap around the ring's end:
 * those are copied into the CPU's 64 KiB scratch (PERFRING_PULL_SCRATCH),
 * one after the other, so all of a pull's items stay valid together. A pull
 * stops early, before a wrapped record that no longer fits what is left of
 * that scratch (the next pull returns it); every record fits an empty one.
 * The kernel writes at most one wrapped record per lap of the ring, so this
 * limit binds only on rings the kernel did not write.
 * perfring_cpu_next(), pull and commit work on one batch: they may be mixed.
 * Stats count records as they are returned. Safe concurrently with calls
 * for other CPUs.
 */
#define PERFRING_PULL_SCRATCH 65536u
struct perfring_item {
	int kind;                      /**< PERFRING_NEXT_SAMPLE or PERFRING_NEXT_RECORD */
	union {
		struct perfring_sample sample;
		struct perfring_record record;
	} u;
};
PERFRING_API int perfring_cpu_pull(struct perfring_session *s, int cpu,
				   struct perfring_item *items, size_t max);

/** perfring_cpu_pull_opts() flag: a sample item's optional fields are set
 *  only when its event's sample_type has their bit. event, cpu, pid, tid,
 *  time, id and record, which every sample has, are always set; ip, addr,
 *  period, callchain and callchain_nr, raw and raw_size without their bit
 *  hold what the item held or zero, as stream_id and the profiler's fields
 *  always do. For loops that read fields under their bit, as a binding that
 *  maps sample_type to optional fields does (what it saves:
 *  docs/API-NOTES.md). */
#define PERFRING_PULL_PRESENT_ONLY (1u << 0)

/** Options for perfring_cpu_pull_opts(). NULL = defaults. */
struct perfring_pull_opts {
	size_t sz;      /**< sizeof(struct perfring_pull_opts) */
	uint32_t flags; /**< PERFRING_PULL_PRESENT_ONLY, or 0; others -EINVAL */
};

/** perfring_cpu_pull with opts (NULL: exactly perfring_cpu_pull). The same
 *  batch, rules and errors; opts' errors as for every opts struct (-EINVAL,
 *  -E2BIG for a larger struct with a non-zero tail). Pulls with different
 *  flags may be mixed in one batch. */
PERFRING_API int perfring_cpu_pull_opts(struct perfring_session *s, int cpu,
					struct perfring_item *items, size_t max,
					const struct perfring_pull_opts *opts);

/** Per-CPU counters since start. */
struct perfring_cpu_stats {
	uint64_t records;       /**< records read (samples and kernel records) */
	uint64_t bytes;         /**< bytes read */
	uint64_t lost;          /**< records the kernel dropped: LOST and
	                             LOST_SAMPLES records, and after stop (or, in
	                             pid mode, the process's end) the drops no LOST
	                             record reported (R4, see stop) */
	uint64_t corrupt;       /**< bad records skipped (header, overrun, field) */
	uint64_t wakeups;       /**< kernel readiness wakeups handled */
	uint32_t max_fill_pct;  /**< highest ring fill seen at a read */
	uint32_t hup;           /**< 1 once the ring's end was reported: its fd's HUP
	                             (in pid mode, the process's exit, R2), after the
	                             last drain. A report, not a control */
	uint64_t samples;       /**< PERF_RECORD_SAMPLE records delivered */
	uint64_t late;          /**< merged parses: records older than one a merged
	                             parse already delivered (see below) */
	uint64_t unknown;       /**< records of unknown type or of an id this
	                             session does not own, skipped (R12) */
	uint64_t flushes;       /**< timer (flush/poll) passes that read this ring */
	uint64_t overwritten;   /**< opts.overwrite: BYTES the kernel wrote into this
	                             ring that no snapshot delivered because newer
	                             records overwrote them first (or tore the oldest
	                             one). Bytes, exact: the kernel's head positions
	                             give them, while the number of records they
	                             held is unknowable once overwritten. Never in
	                             lost: lost counts what the kernel dropped
	                             (while a snapshot paused the ring) */
};

/** Copies `cpu`'s counters. -ENOENT for an unwatched CPU. R8: callable from
 *  any thread while parses run: each counter is read whole and counters only
 *  grow, but the copy is not a snapshot across counters. */
PERFRING_API int perfring_session_cpu_stats(const struct perfring_session *s, int cpu,
					    struct perfring_cpu_stats *out);

/*
 * CPU hotplug (opts.follow_hotplug, with opts.cpus NULL). The session's CPU
 * set is every possible CPU (/sys/devices/system/cpu/possible), sized once
 * at perfring_session_new, so nothing of it moves while a callback runs;
 * the CPUs online at start are opened, the rest wait.
 *  - The signal: a NETLINK_KOBJECT_UEVENT socket, watched by every reactor
 *    attached to the session (each through its driver's watch(), as the slot
 *    after its CPUs' slots) and by the session's own waits, tells of a change
 *    at once. /sys/devices/system/cpu/online is also read again at each
 *    flush (a reactor's timer; parse_all and the sleep-polling wait at most
 *    every 100 ms), which is all there is where the socket cannot be had
 *    and what catches lost uevents (or none at all, in a network namespace
 *    other than the first); with PERFRING_FLUSH_NEVER only the socket
 *    tells. A message only says "look again": each change is confirmed
 *    against the online list, since uevents can be lost or reordered.
 *  - Offline: every reactor drains the ring to its head and stops watching
 *    its slot, the session reads the kernel's drop counts (R4) and closes
 *    the CPU's fds. Its stats carry on; perfring_session_fds() no longer
 *    lists it, fd_for_cpu gives -ENOENT, parse_for_cpu reads it as empty.
 *  - Online: the CPU's events are opened, redirected, filtered, mapped and
 *    enabled as at start, BPF output map entries too (after a stop they
 *    wait for the next start). An offline CPU's map entries are deleted. Every
 *    reactor watches its slot again, with the new fd, and drains it once.
 *    A failure to open is reported through the cpu callback (online false)
 *    and perfring_session_last_error(); the session goes on with the other
 *    CPUs and tries that one again only after it has gone offline.
 *  - Merged parses take a ring that appears mid-stream as any other: its
 *    first records may be older than ones already delivered, and those are
 *    counted in stats.late.
 *  - Changes are made on the thread that notices them, inside a reactor
 *    call (perfring_reactor_on_ready/_on_timer), parse_for_duration,
 *    parse_until or parse_all (which looks at most every 100 ms), never
 *    inside a parse of a ring: so every reactor of a following session
 *    runs on one thread. parse_for_cpu and the pull form never make them:
 *    a loop of one's own (level 2) calls perfring_session_hotplug_sync()
 *    when perfring_session_hotplug_fd() is readable, and at its flush.
 *  - enable_on_exec applies to the CPUs of the start: a CPU that comes
 *    online later is enabled at once.
 * Tests replace /sys with PERFRING_TEST_SYSFS and the uevent socket with
 * PERFRING_TEST_UEVENT_FD (test-only; see docs/HOTPLUG.md).
 */

/** After each change of a following session, fn(cpu, online, ctx): online
 *  true once the CPU's ring is open and watched, false once it is closed
 *  (or its open failed: perfring_session_last_error() says why). Called on
 *  the parsing thread from inside a parse or reactor call (see above); fn
 *  may call perfring_session_fds() (which already reflects the change) and
 *  perfring_session_free() (R7). Set before start; fn NULL removes it.
 *  -EINVAL without opts.follow_hotplug, -EBUSY after start. */
PERFRING_API int perfring_session_set_cpu_callback(struct perfring_session *s,
						   void (*fn)(int cpu, bool online, void *ctx),
						   void *ctx);

/** Level 2: the hotplug notifier of a started following session, a
 *  socket to watch for reading with the rings' fds; when it is readable,
 *  call perfring_session_hotplug_sync(). Owned by the session. -ENOENT when
 *  there is none: the session does not follow hotplug, is not started, or
 *  could not have the uevent socket (then only a sync at the loop's flush
 *  sees changes). -EINVAL for NULL. */
PERFRING_API int perfring_session_hotplug_fd(const struct perfring_session *s);

/** Level 2: reads the notifier, if any, and the online CPU list, and makes
 *  every change it shows, as a reactor does: a CPU that left is drained
 *  (its records reach their callbacks) and closed, one that came is opened
 *  and enabled; the cpu callback reports each; perfring_session_fds() then
 *  lists the new set, and a returned CPU has a new fd to watch (epoll
 *  drops a closed fd by itself, unless a copy of it is open, as in a
 *  child). Call it when perfring_session_hotplug_fd() is readable, and at
 *  the loop's flush interval, because uevents can be lost (a read of a
 *  small sysfs file). Returns the samples the drains of CPUs
 *  that left delivered, -EINVAL (NULL, no follow_hotplug, before start),
 *  -EBUSY inside a parse of s (from a callback), or -ECANCELED when a
 *  callback freed the session (R7). Call it on the thread that runs the
 *  loop, not concurrently with other calls on s (every reactor's rule). */
PERFRING_API int perfring_session_hotplug_sync(struct perfring_session *s);


/* ---------------------------------------------- time-ordered across CPUs */

/*
 * Merged parses take a snapshot of every ring's head and deliver all records
 * up to it in time order: each record delivered is the oldest of the rings'
 * next records, equal times in CPU order, so the output is in non-decreasing
 * time whenever each ring's own records are. A record without a time, such
 * as one of an id the session does not own, goes out as soon as its ring is
 * next. A record older than one a merged parse already delivered is counted
 * in its CPU's stats.late: across calls, one that was still being written at
 * the snapshot; within a call, one whose ring went back in time. How the
 * order is found (a loser tree over the rings' next records; when the rings
 * interleave finely, batches of every ring's next records placed into
 * buckets by time) never changes it. A callback must not start another
 * parse of its own session.
 */

/*
 * Time order with a bound (opts.order_window_ns for the session's merged
 * parses; perfring_loop_opts.order_window_ns for a reactor, and so for every
 * adapter). The heads of a snapshot are read one after another, so without
 * a window a record written on one CPU just after its head was read can be
 * older than one of another CPU delivered in the same pass (stats.late),
 * and a reactor without a window delivers per CPU, in no order across CPUs.
 * With a window W:
 *  - A pass that begins at CLOCK_MONOTONIC time T (read before any head)
 *    delivers, in time order, every record with time <= T - W, and keeps
 *    the younger ones for a later pass. Kept records stay where they are, in
 *    their rings (each ring is in time order: a ring's reading stops at its
 *    first record past the bound, nothing is copied; a timed BPF ring
 *    buffer's, which its ring cannot hold back, are copied and sorted, at
 *    most the ring's size: read/rbkeep), so a window takes
 *    room in the rings: records written faster than W drains them are lost
 *    as they would be with a slower reader. Records without a time go when
 *    their ring is next, as always.
 *  - Every record that became visible within W of its timestamp is then
 *    delivered in non-decreasing time order across all rings, whatever the
 *    load, and stats.late stays 0. A record that became visible later than
 *    that (a writer held off its CPU for longer than W) is delivered and
 *    counted in stats.late, never dropped.
 *  - Idle CPUs never hold others back: every pass reads every ring, and an
 *    idle ring has nothing older than T - W.
 *  - Bounded latency: a kept record is delivered by a pass at most W + the
 *    flush period (flush_ms, poll_interval_ms in default mode, the loop's
 *    flush_ms) after its timestamp, even when no wakeup comes: the reactor
 *    (and the session's waits) arm their one timer for the oldest kept
 *    record's time + W when that is sooner than the flush, rounded up to the
 *    next millisecond. With PERFRING_FLUSH_NEVER that timer is still armed
 *    for kept records.
 *  - Nothing younger can come after perfring_session_stop(): the next parse
 *    (parse_all, a wait, a reactor's pass) delivers what is kept without
 *    waiting, as does a reactor's pass after one of its rings reported its
 *    end (HUP), a CPU going offline (hotplug), and perfring_reactor_free()
 *    (and the adapters' detach) called outside a callback, which runs one
 *    last pass first; so does perfring_session_free() of a session with
 *    opts.order_window_ns, called outside a callback (inside one, R7, it
 *    runs none, and what is kept goes with the rings, as unread records
 *    do).
 *  - A reactor's budget (perfring_loop_opts.budget) with a window bounds
 *    each pass to that many samples, taken one record at a time, and the
 *    reactor comes back on a soon turn for the rest. Without a budget a
 *    windowed pass takes the same fast paths (runs, batches) as any merge.
 *  - A window applies to every ring of the session: a reactor with a window
 *    and loop opts.cpus merges all of the session's rings.
 *  - W is at most 60 s (-EINVAL above, and with opts.overwrite, whose
 *    snapshots are complete and need none). 10 ms is plenty on an idle or
 *    loaded machine alike; 1-2 ms holds under a two-CPU storm here.
 *  - perfring_session_order_stats() tells the late records the window could
 *    not have ordered (late_after_window) from any other late record.
 */

/** The order window's account of a session's merged parses and reactors. */
struct perfring_order_stats {
	size_t sz;                  /**< sizeof(struct perfring_order_stats) */
	uint64_t passes;            /**< merged passes with a window */
	uint64_t late_after_window; /**< of the late records (stats.late, every
	                                 CPU's), those not yet in their ring when
	                                 the pass before them began although their
	                                 time was within its bound: they became
	                                 visible more than W after their time (a
	                                 writer held off its CPU: an interrupt,
	                                 a hypervisor's steal). Only a larger W
	                                 orders them; under a window every other
	                                 late record is the library's fault */
};

/** Copies the window's account into out, whose sz the caller sets (an
 *  older, smaller struct gets the fields it has; a larger one's tail is
 *  zeroed). R8: callable from any thread while parses run. -EINVAL for a
 *  NULL argument or an sz below the first published size. */
PERFRING_API int perfring_session_order_stats(const struct perfring_session *s,
					      struct perfring_order_stats *out);

/** Drains what is in every ring now, time-ordered. Never blocks or sleeps. */
PERFRING_API int perfring_session_parse_all(struct perfring_session *s);

/** Repeats parse_all for `ns` nanoseconds. Default mode sleeps
 *  poll_interval_ms after an empty pass; wakeup mode blocks on the kernel's
 *  readiness with an internal epoll set, draining all rings every flush_ms
 *  on a timerfd in the same set (both fds are opened by the first such
 *  wait and kept until perfring_session_free). In pid mode it returns once
 *  the process has exited and its rings are drained (R2). Returns the total
 *  samples handled, -EBUSY while another parse holds a ring (R1), or
 *  -ECANCELED when a callback freed the session (R7). */
PERFRING_API int perfring_session_parse_for_duration(struct perfring_session *s, uint64_t ns);

/** As parse_for_duration, until should_stop(ctx) returns true (checked after
 *  every pass and wakeup) or a callback asks to stop. */
PERFRING_API int perfring_session_parse_until(struct perfring_session *s,
					      bool (*should_stop)(void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
