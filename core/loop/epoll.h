/* SPDX-License-Identifier: MIT */
/* The built-in driver: an epoll set and a timerfd, made on the first wait
 * in wakeup mode. Translates epoll's answers into reactor calls; no policy. */
#ifndef PR_LOOP_EPOLL_H
#define PR_LOOP_EPOLL_H

#include "base/err.h"

#include <perfring/perfring.h>

struct pr_epoll {
	int epfd;
	int tfd;                    /* the reactor's one timer */
	bool soon;                  /* a soon() turn is due */
	struct perfring_reactor *r;
};

extern const struct perfring_loop_ops pr_epoll_ops;

/* Makes the epoll set and the timerfd, or -errno with a sentence in e. */
int pr_epoll_open(struct pr_epoll *d, struct pr_errbuf *e);
void pr_epoll_close(struct pr_epoll *d);

/* One epoll_wait of at most timeout_ms (-1: until something is ready; 0
 * when a soon turn is due), then the reactor calls for what it reported.
 * 0, or -errno from epoll_wait (EINTR is 0). */
int pr_epoll_turn(struct pr_epoll *d, int timeout_ms);

#endif
