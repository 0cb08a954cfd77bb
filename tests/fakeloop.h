/* SPDX-License-Identifier: MIT */
/* A loop driver for tests: it records what the reactor asks of it (watch,
 * soon, timer, destroy) and lets the test decide when each fires. Public
 * API only. */
#ifndef PR_TESTS_FAKELOOP_H
#define PR_TESTS_FAKELOOP_H

#include <perfring/perfring.h>

#define FAKELOOP_SLOTS 64

struct fakeloop {
	struct perfring_reactor *r;
	bool watched[FAKELOOP_SLOTS];
	int fd[FAKELOOP_SLOTS];
	int watches, unwatches;     /* watch(on) and watch(!on) calls */
	bool soon;                  /* a soon turn is due */
	int soons;                  /* soon(true) calls */
	uint32_t timer_ms;          /* armed: the last timer(ms); 0 = disarmed */
	int timers;                 /* timer(ms > 0) calls */
	int destroys;
	bool destroyed;             /* destroy() called perfring_reactor_destroyed */
	int fail_watch;             /* non-zero: the watch(on) with this number fails */
	/* destroy() returns without calling perfring_reactor_destroyed, as
	 * uv_close finishes later: the test calls it. */
	bool late_destroyed;
	void (*in_destroy)(struct fakeloop *l);  /* called first in destroy() */
};

extern const struct perfring_loop_ops fakeloop_ops;

/* Runs due soon turns until none is left or max turns ran; returns how many. */
int fakeloop_soon_turns(struct fakeloop *l, int max);

/* Polls every watched fd once (timeout 0) and hands what each reports to
 * the reactor; returns how many were ready. */
int fakeloop_poll(struct fakeloop *l);

#endif
