/* SPDX-License-Identifier: MIT */
/* A whole libperfring loop driver on a plain epoll set: the four operations
 * of struct perfring_loop_ops, and one turn of the loop. Shared by
 * epoll-reactor.c and perfring-watch's epoll loop; copy it for your own. */
#ifndef PERFRING_EPOLL_DRIVER_H
#define PERFRING_EPOLL_DRIVER_H

#include <perfring/perfring.h>
#include <stdint.h>

/* epoll data at or above this is the caller's; below it, a reactor slot. */
#define EPOLL_DRIVER_TAGS (UINT64_MAX - 16)

struct epoll_driver {
	int ep;                     /* the caller's epoll set */
	int tfd;                    /* the reactor's timer */
	int soon;                   /* a soon() turn is due */
	struct perfring_reactor *r;
};

extern const struct perfring_loop_ops epoll_driver_ops;

/* Makes the timerfd and adds it to ep. 0 or -errno. */
int epoll_driver_open(struct epoll_driver *d, int ep);
void epoll_driver_close(struct epoll_driver *d);

/* Hands one epoll event to the reactor; false: it is the caller's (tag). */
int epoll_driver_event(struct epoll_driver *d, const void *epoll_event);

/* After a batch of events: the soon turn, if one is due. */
void epoll_driver_after(struct epoll_driver *d);

/* The epoll_wait timeout: 0 while a soon turn is due, else -1. */
int epoll_driver_timeout(const struct epoll_driver *d);

#endif
