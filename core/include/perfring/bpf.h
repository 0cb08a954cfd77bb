/* SPDX-License-Identifier: MIT */
/*
 * BPF output and BPF ring buffers: a BPF program's bpf_perf_event_output()
 * records and BPF_MAP_TYPE_RINGBUF records, read by a session on any loop.
 */
#ifndef PERFRING_BPF_H
#define PERFRING_BPF_H

#include <perfring/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Reads a BPF program's bpf_perf_event_output() records: libbpf's
 *  perf_buffer on any loop (before start; -EBUSY after). map_fd is a
 *  BPF_MAP_TYPE_PERF_EVENT_ARRAY (the session keeps its own fd of it, so the
 *  caller may close theirs).
 *  - At start, for each watched CPU, it opens a PERF_COUNT_SW_BPF_OUTPUT
 *    software event (sample_period 1, RAW plus IDENTIFIER, TID, TIME, CPU,
 *    CLOCK_MONOTONIC), redirects it into that CPU's ring and stores its fd
 *    in the map at key = the CPU. perfring_session_free() deletes exactly
 *    the entries it wrote; an entry it did not write (a CPU it does not
 *    watch) is left as it is. The map holds a reference to each event's
 *    file, so an entry left behind would keep the event alive.
 *  - bpf_perf_event_output(ctx, &map, BPF_F_CURRENT_CPU, data, n) then
 *    arrives as a sample of *out: raw/raw_size are the kernel's RAW payload,
 *    the n bytes padded so that the record stays 8-byte aligned (raw_size =
 *    round_up(n + 4, 8) - 4, as libbpf's perf_buffer passes it); pid/tid are
 *    the task the program ran in; time is CLOCK_MONOTONIC, the clock of
 *    bpf_ktime_get_ns(), so merged parses order these samples with the
 *    session's other events. Drops count as for any ring (LOST, R4).
 *  - On a CPU the session does not watch, the program's output call fails
 *    (-ENOENT: no entry), and while the session is stopped (-EOPNOTSUPP: the
 *    event is disabled).
 *  - Scope: the event is CPU-wide whatever opts.pid is (or a cgroup scope),
 *    because the program, not the event, decides what is written: in pid
 *    mode every output of the program on a watched CPU arrives, in any
 *    task's context, so a program that should see one process tests its
 *    tgid (bpf_get_current_pid_tgid). With enable_on_exec it is enabled at
 *    start, not at the exec. Where the kernel refuses to redirect it into a
 *    scoped ring (PERF_EVENT_IOC_SET_OUTPUT), start fails with its sentence.
 *  - Several maps on one session each get their own event per CPU. A map
 *    has one entry per CPU, so one reader: the same map twice on a session
 *    is -EEXIST. Two readers of one map at a time (two sessions, or one
 *    and a perf_buffer) do not work: the later start replaces the earlier
 *    one's entries on the CPUs both watch, and the earlier free deletes the
 *    later one's (a PERF_EVENT_ARRAY cannot be read back to tell).
 *  Errors: -EBADF when map_fd is not a BPF map (not open, not BPF, or another
 *  BPF object); -EINVAL when the map is not a PERF_EVENT_ARRAY; -EPERM
 *  when user space cannot write the map's entries (map_fd made or opened
 *  with BPF_F_RDONLY, or the map frozen with BPF_MAP_FREEZE), and at start
 *  if it became so after the add (the sentence says which); -E2BIG at
 *  start when max_entries is not above the highest watched CPU (the
 *  sentence names both). The bpf(2) calls are the library's own
 *  (BPF_OBJ_GET_INFO_BY_FD, BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM): no
 *  libbpf is linked. *out (may be NULL) is owned by s. */
PERFRING_API int perfring_session_add_bpf_output(struct perfring_session *s, int map_fd,
						 struct perfring_event **out);

/** PERFRING_RINGBUF_TIME: each record holds its time (see time_offset). */
#define PERFRING_RINGBUF_TIME 0x1u

/** Options of perfring_session_add_bpf_ringbuf(). */
struct perfring_ringbuf_opts {
	size_t sz;            /**< sizeof(struct perfring_ringbuf_opts) */
	uint32_t flags;       /**< PERFRING_RINGBUF_TIME, or 0 */
	uint32_t time_offset; /**< with PERFRING_RINGBUF_TIME: the byte offset in
	                           each record of a u64 CLOCK_MONOTONIC ns
	                           (bpf_ktime_get_ns()) */
};

/** Reads a BPF_MAP_TYPE_RINGBUF (type 27) beside the session's perf rings,
 *  on any loop: libbpf's ring_buffer without its epoll set. Before start
 *  (-EBUSY after); may be called for several maps (a tool with one ring
 *  buffer per CPU adds each), and a session may hold ring buffers alone. The
 *  session keeps its own duplicate of map_fd: the caller may close theirs.
 *  opts NULL: untimed. At start the ring is mapped (the consumer page
 *  read-write, the producer page and the data, mapped twice, read-only).
 *
 *  Each committed record arrives as a sample of *out: raw/raw_size the
 *  record's exact bytes, cpu -1, pid and tid 0, time the u64 at time_offset
 *  when timed (0 and counted in stats.untimed when the record is too short
 *  for it), else 0. Every reader drains it: parse_all, parse_for_duration,
 *  parse_until, every reactor and adapter (a slot of its own, so
 *  perfring_session_slots() counts it), or a loop of one's own through
 *  perfring_ringbuf_fd() and perfring_ringbuf_parse(). *out is named
 *  "ringbuf:NAME(map ID)"; it takes perfring_event_set_callback(), and has no
 *  attr (perfring_event_attr() gives NULL); set_filter, event_field and
 *  set_group give -EOPNOTSUPP. The kernel counts no drops for a ring
 *  buffer: a failed bpf_ringbuf_reserve() or bpf_ringbuf_output() is the
 *  program's to count.
 *
 *  Errors, each with a sentence: -EBADF map_fd is not a BPF map; -EINVAL
 *  another map type (the sentence names it, and for a PERF_EVENT_ARRAY says
 *  to use perfring_session_add_bpf_output), opts.sz too small, unknown
 *  flags, time_offset without PERFRING_RINGBUF_TIME or beyond any record the
 *  ring can hold; -E2BIG a larger opts with a non-zero tail; -EPERM a
 *  read-only fd or a frozen map (the consumer page is mapped writable);
 *  -EEXIST the session reads this map already (one consumer position);
 *  -ENOMEM, or the error of the dup. *out is owned by s. */
PERFRING_API int perfring_session_add_bpf_ringbuf(struct perfring_session *s, int map_fd,
						  const struct perfring_ringbuf_opts *opts,
						  struct perfring_event **out);

/** After start: the fd to watch for a loop of one's own (readable while the
 *  ring buffer holds records, a level readiness; the session's own dup,
 *  closed by perfring_session_free), or -EINVAL for an event that is not a
 *  ring buffer, -ENOTCONN before start. */
PERFRING_API int perfring_ringbuf_fd(const struct perfring_event *ev);

/** Delivers up to max records (0 = all) of the ring buffer to its event's
 *  callback; never blocks. Before it returns it looks at the ring once more
 *  after a full barrier, so a record committed meanwhile is delivered too
 *  (within max): an edge-triggered loop never waits for a wakeup that will
 *  not come. *more (may be NULL): records are left (the budget). Returns
 *  the records delivered, or -EINVAL (not a ring buffer, or before start),
 *  -EBUSY another parse holds it (R1), -ECANCELED the session was freed
 *  inside a callback (R7), -EIO a record header that cannot be right (the
 *  ring is read no further), each with a sentence. */
PERFRING_API int perfring_ringbuf_parse(struct perfring_event *ev, size_t max, bool *more);

/** A ring buffer's counts since start. */
struct perfring_ringbuf_stats {
	uint64_t records;   /**< delivered */
	uint64_t bytes;     /**< of those records' data */
	uint64_t discarded; /**< skipped: bpf_ringbuf_discard() */
	uint64_t untimed;   /**< timed ring buffer, record too short for its time */
	uint64_t wakeups;   /**< drains that found records */
};
/** Copies ev's counts to *out, from any thread (each counter whole, R8).
 *  -EINVAL for NULL or an event that is not a ring buffer. */
PERFRING_API int perfring_ringbuf_stats(const struct perfring_event *ev,
					struct perfring_ringbuf_stats *out);

#ifdef __cplusplus
}
#endif
#endif
