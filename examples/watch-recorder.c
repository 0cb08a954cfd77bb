/* SPDX-License-Identifier: MIT */
/* perfring-watch --overwrite: the flight recorder. The rings overwrite their
 * oldest records and wake no one, so the loop waits only for signals (the
 * snapshot signal, SIGINT, SIGTERM, SIGCHLD) and the once-a-second tick that
 * ends -d; each snapshot goes to stdout or to a file of --snapshot-dir. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Points stdout at the next snapshot's file; the old stdout, or -1. */
static int redirect(struct watch *w, bool *failed)
{
	char path[4096];
	int fd, saved;

	*failed = false;
	if (!w->a.snapshot_dir)
		return -1;
	snprintf(path, sizeof(path), "%s/snapshot-%u.%s", w->a.snapshot_dir, w->snapshots + 1,
		 w->a.json ? "json" : "txt");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "perfring-watch: --snapshot-dir: %s: %s\n", path, strerror(errno));
		*failed = true;
		return -1;
	}
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	return saved;
}

void watch_snapshot(struct watch *w)
{
	struct perfring_snapshot_opts so = { .sz = sizeof(so), .wait = w->a.snapshot_wait };
	struct perfring_cpu_stats st, sum = { 0 };
	bool failed;
	int saved = redirect(w, &failed), n;

	if (failed) {
		w->failed = true;
		return;
	}
	n = perfring_session_snapshot_opts(w->s, &so);
	fflush(stdout);
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	if (n < 0) {
		fprintf(stderr, "perfring-watch: snapshot: %s\n", perfring_session_last_error(w->s));
		w->failed = true;
		return;
	}
	for (size_t i = 0; i < w->ncpu; i++) {
		if (perfring_session_cpu_stats(w->s, w->cpus[i].cpu, &st))
			continue;
		sum.lost += st.lost;
		sum.overwritten += st.overwritten;
	}
	w->snapshots++;
	fprintf(stderr, "perfring-watch: snapshot %u: %d samples; since start %llu lost while "
		"paused, %llu bytes overwritten\n", w->snapshots, n, (unsigned long long)sum.lost,
		(unsigned long long)sum.overwritten);
}

struct rec {
	int sfd, tfd;
};

static int rec_open(struct rec *r, struct watch *w)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	if (w->a.snapshot_sig)
		sigaddset(&set, w->a.snapshot_sig);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	r->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	return r->sfd < 0 || r->tfd < 0 ? -errno : 0;
}

static void tick_arm(struct rec *r, int ms)
{
	struct itimerspec its = { .it_value = { ms / 1000, (ms % 1000) * 1000000L } };

	if (!ms)
		its.it_value.tv_nsec = 1;
	timerfd_settime(r->tfd, 0, &its, NULL);
}

static void on_signals(struct rec *r, struct watch *w)
{
	struct signalfd_siginfo si;

	while (!w->stopping && read(r->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (w->a.snapshot_sig && (int)si.ssi_signo == w->a.snapshot_sig)
			watch_snapshot(w);
		else
			watch_signal(w, (int)si.ssi_signo);
	}
}

static void serve(struct rec *r, struct watch *w)
{
	struct pollfd p[2] = { { .fd = r->sfd, .events = POLLIN },
			       { .fd = r->tfd, .events = POLLIN } };
	uint64_t x;

	while (!w->stopping) {
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			watch_loop_failed(w, "poll", -errno);
			return;
		}
		if (p[0].revents)
			on_signals(r, w);
		if (p[1].revents && read(r->tfd, &x, sizeof(x)) == sizeof(x)) {
			watch_tick(w);
			if (!w->stopping)
				tick_arm(r, watch_next_tick_ms(w));
		}
	}
}

int watch_loop_recorder(struct watch *w)
{
	struct rec r = { -1, -1 };
	int err = rec_open(&r, w);

	if (err)
		fprintf(stderr, "perfring-watch: recorder setup: %s\n", perfring_strerror(err));
	if (!err) {
		w->loop = &r;
		watch_started(w);
		fprintf(stderr, "perfring-watch: recording into overwrite rings%s%s\n",
			w->a.snapshot_sig ? "; a snapshot on " : "",
			w->a.snapshot_sig == SIGUSR1 ? "SIGUSR1" : w->a.snapshot_sig ? "SIGUSR2" : "");
		tick_arm(&r, watch_next_tick_ms(w));
		serve(&r, w);
		w->loop = NULL;
	}
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.tfd >= 0)
		close(r.tfd);
	return err ? -1 : 0;
}
