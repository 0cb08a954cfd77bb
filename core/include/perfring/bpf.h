/* SPDX-License-Identifier: MIT */
/*
 * BPF output: a BPF program's bpf_perf_event_output() records read by a
 * session, on any loop.
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

#ifdef __cplusplus
}
#endif
#endif
