/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder: snapshots of an overwrite session (opts.overwrite).
 */
#ifndef PERFRING_RECORDER_H
#define PERFRING_RECORDER_H

#include <perfring/common.h>
#include <perfring/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a snapshot waits, after pausing the rings, for the records the kernel
 *  had begun to write before the pause (perfring_snapshot_opts.wait). */
enum perfring_snapshot_wait {
	/** One RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL)). Nothing a
	 *  CPU runs can hold it. Its cost, and VISIT's: docs/API-NOTES.md. */
	PERFRING_SNAPSHOT_WAIT_GRACE = 0,
	/** The calling thread runs on each watched CPU in turn (the kernel writes
	 *  a CPU's ring on that CPU, with preemption off), then gets its CPU
	 *  affinity back: a shorter pause than a grace period, so fewer records
	 *  are dropped under a running stream. But the call waits until
	 *  every watched CPU runs it: one monopolised by a real-time task (with
	 *  RT throttling off) holds it as long. Where the thread may
	 *  not run on a CPU (a cpuset without it), the grace period instead. */
	PERFRING_SNAPSHOT_WAIT_VISIT = 1,
};

/** Options for perfring_session_snapshot_opts(). NULL = defaults. */
struct perfring_snapshot_opts {
	size_t sz;                 /**< sizeof(struct perfring_snapshot_opts) */
	uint32_t synthesize;       /**< PERFRING_REC_COMM | PERFRING_REC_MMAP, or 0:
	                                before the rings' records, the record callback
	                                gets synthetic COMM (one per thread, from
	                                /proc/PID/task/TID/comm) and MMAP2 records
	                                (one per executable mapping, from
	                                /proc/PID/maps) of the watched tasks (opts.pid's
	                                process, else every process), as perf's
	                                --tail-synthesize makes them, so a snapshot
	                                that holds no MMAP records of its own can be
	                                symbolized. They have record->synthetic set,
	                                cpu -1, event NULL, and time = the oldest time
	                                in the snapshot (now when it is empty). Needs a
	                                record callback (-EINVAL); other bits -EINVAL */
	uint32_t wait;             /**< enum perfring_snapshot_wait; default GRACE,
	                                another value -EINVAL */
};

/*
 * Snapshots of an overwrite session (opts.overwrite), the flight recorder:
 *  1. pauses output on every ring (PERF_EVENT_IOC_PAUSE_OUTPUT), then waits
 *     until a record the kernel had begun to write before the pause is
 *     complete: one RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL)),
 *     or with PERFRING_SNAPSHOT_WAIT_VISIT a visit of the
 *     calling thread to each watched CPU (faster, see there). A record
 *     produced while paused is dropped by the kernel and counted as lost (a
 *     LOST record in the next snapshot, and the per-event counts after stop:
 *     R4 holds), never hidden;
 *  2. copies the bytes written since the previous snapshot (at most a ring)
 *     and resumes output at once: the pause lasts the wait and the copy,
 *     never the delivery (when no ring got anything since the previous
 *     snapshot there is no pause at all);
 *  3. finds the complete records by walking from the head, newest first, as
 *     perf's overwrite_rb_find_range does, up to the previous snapshot's head
 *     or the first record the kernel overwrote in part; a header no kernel
 *     writes (size 0, under 8, unaligned, past the end) ends the walk and is
 *     counted in stats.corrupt;
 *  4. delivers them oldest first through the usual callbacks, time-ordered
 *     across CPUs by the merged parse (stats, R7 and the late rule as for
 *     parse_all).
 * Stats count what snapshots deliver (records, bytes, samples, lost,
 * corrupt), and max_fill_pct the largest share of a ring one snapshot held.
 * Returns the samples delivered. A later snapshot delivers only records
 * written after the previous one; what newer records overwrote before a
 * snapshot is counted in stats.overwritten (bytes), never in lost.
 * A callback returning non-zero stops the delivery after that record; the
 * rest of that snapshot is kept and delivered first by the next call, before
 * it takes a new snapshot. -EOPNOTSUPP without opts.overwrite, -EINVAL
 * before start, -EBUSY from inside a snapshot's callback or while another
 * thread snapshots. Works while started or stopped. The copies take two
 * buffers of a ring's size per CPU, allocated by the first snapshot.
 * Without a wait (no membarrier: ENOSYS, or EINVAL under nohz_full; with
 * WAIT_VISIT, and a CPU the thread cannot run on) it is a re-read of the
 * head after the copy, and the bytes the kernel wrote over meanwhile are
 * left out: a writer caught between reserving and publishing its record
 * could still tear the oldest one, which only the waits rule out.
 */
PERFRING_API int perfring_session_snapshot(struct perfring_session *s);

/** perfring_session_snapshot() with options (NULL = the same). */
PERFRING_API int perfring_session_snapshot_opts(struct perfring_session *s,
						const struct perfring_snapshot_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
