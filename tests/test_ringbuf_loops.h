/* SPDX-License-Identifier: MIT */
/* The ring buffer loop tests' fixture (tests/test_ringbuf_loops.c), one
 * file per loop because libevent's and libev's headers cannot meet in one. */
#ifndef TEST_RINGBUF_LOOPS_H
#define TEST_RINGBUF_LOOPS_H

#include "test_ringbuf_fx.h"

#define LN 10000
#define LTIMEOUT_MS 20000

struct rlfx {
	struct rbfx f;
	struct perfring_loop_opts lo;
	int ticks;
};

/* Two programs (output, untimed, and reserve+submit, timed) on two maps of
 * one started session; lo: flushing off and a budget of 7, so that only each ring
 * buffer's own slot, its wakeups and its continuations bring records. */
void rlfx_open(struct rlfx *l);
/* A 1 ms tick: the calls at the first; then true when the loop should stop. */
bool rlfx_tick(struct rlfx *l);
/* Checks what came (loop names the loop) and frees everything. */
void rlfx_close(struct rlfx *l, const char *loop);

#endif
