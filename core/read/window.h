/* SPDX-License-Identifier: MIT */
/* The order window's account: which late records the window could not
 * have ordered. A record that was not yet in its ring when the pass before
 * it began, although its time was within that pass's bound, became visible
 * more than the window after its time (its writer stalled: an interrupt, or
 * the hypervisor took the CPU): the contract counts it late, and only the
 * window's size could have ordered it. Any other late record under a
 * window is the merge's fault. Counted per pass, from each ring's position
 * and late count at the pass's start and end: nothing per record. */
#ifndef PR_READ_WINDOW_H
#define PR_READ_WINDOW_H

#include "read/cpu.h"

#include <stdint.h>

struct pr_window_ring {
	uint64_t head;  /* the ring's head at the previous pass's snapshot */
	uint64_t tail;  /* its tail when this pass began */
	uint64_t late;  /* its stats.late then */
};

struct pr_window {
	struct pr_window_ring *ring;
	uint64_t limit;   /* the previous pass's bound; UINT64_MAX: no window */
	uint64_t newest;  /* the newest time delivered when this pass began */
	uint64_t passes;  /* passes with a window (R8: read by any thread) */
	uint64_t after;   /* late records that arrived after their window (R8) */
};

/* 0 or -ENOMEM; pr_window_free takes either. */
int pr_window_init(struct pr_window *w, uint32_t n);
void pr_window_free(struct pr_window *w);

/* Before a pass over cpu[0..n) takes its snapshot. */
void pr_window_begin(struct pr_window *w, const struct pr_cpu *cpu, uint32_t n,
		     uint64_t newest);

/* After it, limit its bound (UINT64_MAX: none): each ring's new late
 * records are the window's to excuse if the ring began past the previous
 * snapshot (every record it read arrived since) and no delivered record had
 * gone past that pass's bound. */
void pr_window_end(struct pr_window *w, const struct pr_cpu *cpu, uint32_t n, uint64_t limit);

#endif
