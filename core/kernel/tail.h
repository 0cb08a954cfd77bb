/* SPDX-License-Identifier: MIT */
/* Tail synthesis: COMM and MMAP2 record bodies for tasks, read from /proc,
 * as perf's --tail-synthesize makes them for an overwrite ring's snapshot. */
#ifndef PR_KERNEL_TAIL_H
#define PR_KERNEL_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest body: an MMAP2 with a PATH_MAX name, 8-byte padded. */
#define PR_TAIL_BODY_MAX (64 + 4096 + 8)

/* One synthesized record: its PERF_RECORD_* type and its body as the kernel
 * lays it out (no header, no sample_id trailer), len a multiple of 8.
 * Non-zero stops the synthesis. */
typedef int (*pr_tail_fn)(uint32_t type, uint32_t pid, uint32_t tid, const uint8_t *body,
			  size_t len, void *ctx);

/* For process pid, or every process in /proc with pid 0: a COMM for each
 * thread (comm) and an MMAP2 for each executable mapping (mmap). A process
 * or thread that exits meanwhile is skipped. 0, fn's non-zero value, or
 * -ENOMEM. */
int pr_tail_synth(int pid, bool comm, bool mmap, pr_tail_fn fn, void *ctx);

#endif
