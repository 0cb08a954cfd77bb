/* SPDX-License-Identifier: MIT */
/* The BPF loop tests' fixture (tests/test_bpf_loops.c), one file per loop
 * because libevent's and libev's headers cannot meet in one. */
#ifndef BPF_LOOPS_H
#define BPF_LOOPS_H

#include "kbpf.h"

#include <perfring/perfring.h>
#include <stdbool.h>

#define N 10000
#define TIMEOUT_MS 20000

struct lfx {
	struct kbpf b;
	struct kbpf_check c;
	struct perfring_session *s;
	int ticks;
};

/* The program and a started session (4 KiB watermark) reading its map. */
void lfx_open(struct lfx *f);
/* A 1 ms tick: the calls at the first; then true when the loop should stop. */
bool lfx_tick(struct lfx *f);
/* Checks what came (loop names the loop) and frees everything. */
void lfx_close(struct lfx *f, const char *loop);

#endif
