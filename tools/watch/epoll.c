/* SPDX-License-Identifier: MIT */
/* perfring-watch on a plain epoll loop: epoll-driver.c hands the rings and
 * the reactor's timer to the core's reactor; a signalfd carries SIGINT,
 * SIGTERM and SIGCHLD, and a timerfd the once-a-second tick. */
#include "config.h"
#include "epoll-driver.h"
#include "watch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define TAG_SIGNAL UINT64_MAX
#define TAG_TICK (UINT64_MAX - 1)

struct ep {
	int ep, sfd, tfd;
	struct epoll_driver d;
};
static int ep_add(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The signals stay blocked after the loop, so a second Ctrl-C cannot cut
 * the final drain and summary short; the process exits right after. */
static int signals_open(struct ep *e)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	e->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return e->sfd < 0 ? -errno : ep_add(e->ep, e->sfd, TAG_SIGNAL);
}

static int tick_arm(struct ep *e, int ms)
{
	struct itimerspec its = { .it_value = { ms / 1000, (ms % 1000) * 1000000L } };

	if (!ms)
		its.it_value.tv_nsec = 1;   /* zero would disarm it */
	return timerfd_settime(e->tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

static int setup(struct ep *e, struct watch *w)
{
	struct perfring_loop_opts lo;
	int err;

	e->ep = epoll_create1(EPOLL_CLOEXEC);
	e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (e->ep < 0 || e->tfd < 0)
		return -errno;
	if ((err = signals_open(e)) || (err = ep_add(e->ep, e->tfd, TAG_TICK)) ||
	    (err = epoll_driver_open(&e->d, e->ep)))
		return err;
	watch_loop_opts(w, &lo);
	if ((err = perfring_reactor_new(w->s, &lo, &epoll_driver_ops, &e->d, &e->d.r))) {
		fprintf(stderr, "perfring-watch: %s\n", perfring_session_last_error(w->s));
		return err;
	}
	return 0;
}

static void teardown(struct ep *e)
{
	perfring_reactor_free(e->d.r);
	epoll_driver_close(&e->d);
	if (e->sfd >= 0)
		close(e->sfd);
	if (e->tfd >= 0)
		close(e->tfd);
	if (e->ep >= 0)
		close(e->ep);
}

static void on_signals(struct ep *e, struct watch *w)
{
	struct signalfd_siginfo si;

	while (read(e->sfd, &si, sizeof(si)) == sizeof(si))
		watch_signal(w, (int)si.ssi_signo);
}

static void on_tick(struct ep *e, struct watch *w)
{
	uint64_t expirations;

	if (read(e->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	watch_tick(w);
	if (!w->stopping)
		tick_arm(e, watch_next_tick_ms(w));
}

static void serve(struct ep *e, struct watch *w)
{
	struct epoll_event evs[64];

	while (!w->stopping) {
		int n = epoll_wait(e->ep, evs, 64, epoll_driver_timeout(&e->d));

		if (n < 0 && errno != EINTR) {
			watch_loop_failed(w, "epoll_wait", -errno);
			return;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == TAG_SIGNAL)
				on_signals(e, w);
			else if (tag == TAG_TICK)
				on_tick(e, w);
			else
				epoll_driver_event(&e->d, &evs[i]);
		}
		epoll_driver_after(&e->d);
	}
}

int watch_loop_epoll(struct watch *w)
{
	struct ep e = { .ep = -1, .sfd = -1, .tfd = -1, .d.tfd = -1 };
	int err = setup(&e, w);

	if (err) {
		fprintf(stderr, "perfring-watch: epoll setup: %s\n", perfring_strerror(err));
		teardown(&e);
		return -1;
	}
	w->loop = &e;
	watch_started(w);
	tick_arm(&e, watch_next_tick_ms(w));
	serve(&e, w);
	teardown(&e);
	w->loop = NULL;
	return 0;
}
