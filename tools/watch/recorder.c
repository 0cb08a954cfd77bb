/* SPDX-License-Identifier: MIT */
/* perfring-watch --overwrite: the flight recorder. The rings overwrite their
 * oldest records and wake no one, so the loop waits only for signals (the
 * snapshot signal, SIGINT, SIGTERM, SIGCHLD) and the once-a-second tick that
 * ends -d; each snapshot goes to stdout or to a new file of --snapshot-dir. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* How the snapshot signal was inherited, given back to COMMAND. */
static bool sig_was_blocked, sig_was_ignored;

/* Held from the start: one that comes before the loop's signalfd is pending
 * for it (a snapshot once the recorder runs), not fatal; and not discarded
 * if it was inherited as ignored. */
static void hold_snapshot_signal(int signo)
{
	struct sigaction sa = { .sa_handler = SIG_DFL }, old;
	sigset_t set, was;

	sigemptyset(&set);
	sigaddset(&set, signo);
	sigprocmask(SIG_BLOCK, &set, &was);
	sig_was_blocked = sigismember(&was, signo) == 1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, NULL, &old) == 0 && old.sa_handler == SIG_IGN) {
		sig_was_ignored = true;
		sigaction(signo, &sa, NULL);
	}
}

void watch_recorder_child(const struct watch *w)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigset_t set;

	if (!w->a.snapshot_sig)
		return;
	sigemptyset(&sa.sa_mask);
	if (sig_was_ignored)
		sigaction(w->a.snapshot_sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, w->a.snapshot_sig);
	if (!sig_was_blocked)
		sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* Opened once, by the name given: the files are made inside this directory
 * even if its path is later swapped for a link. A missing or read-only
 * directory is refused now, not when the first incident is due. */
static int open_dir(struct watch *w)
{
	const char *dir = w->a.snapshot_dir;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), err;

	if (fd >= 0 && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == 0) {
		w->snap_dirfd = fd;
		return 0;
	}
	err = errno;
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "perfring-watch: --snapshot-dir %s: %s%s\n", dir, strerror(err),
		err == ENOENT || err == ENOTDIR ? "; it must be an existing directory" :
		"; it must be a directory we can write");
	return WATCH_EXIT_USAGE;
}

int watch_recorder_init(struct watch *w)
{
	if (w->a.snapshot_sig)
		hold_snapshot_signal(w->a.snapshot_sig);
	return w->a.snapshot_dir ? open_dir(w) : 0;
}

void watch_recorder_free(struct watch *w)
{
	if (w->snap_dirfd >= 0)
		close(w->snap_dirfd);
	w->snap_dirfd = -1;
}

/* Snapshot N's file, new: a name that exists (a file, a directory, a link
 * planted there) is refused, never followed, truncated or reused. */
static FILE *snap_create(struct watch *w, const char *name)
{
	int fd = openat(w->snap_dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644), err;
	FILE *f;

	if (fd < 0)
		return NULL;
	if ((f = fdopen(fd, "w")))
		return f;
	err = errno;
	close(fd);
	unlinkat(w->snap_dirfd, name, 0);
	errno = err;
	return NULL;
}

/* 0, or the errno of the flush, sync or close that failed: the data is on
 * the disk or the snapshot is not reported as taken. */
static int snap_close(FILE *f)
{
	int err = 0;

	errno = 0;
	if (fflush(f) == EOF || ferror(f))
		err = errno ? errno : EIO;
	if (!err && fsync(fileno(f)) < 0)
		err = errno;
	if (fclose(f) == EOF && !err)
		err = errno;
	return err;
}

static int stdout_flush(void)
{
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout))
		return errno ? errno : EIO;
	return 0;
}

static void report(struct watch *w, int n)
{
	struct perfring_cpu_stats st, sum = { 0 };

	for (size_t i = 0; i < w->ncpu; i++) {
		if (perfring_session_cpu_stats(w->s, w->cpus[i].cpu, &st))
			continue;
		sum.lost += st.lost;
		sum.overwritten += st.overwritten;
	}
	w->snapshots++;
	fprintf(stderr, "perfring-watch: snapshot %u: %d samples; since start %llu lost while "
		"paused, %llu bytes overwritten\n", w->snap_seq, n, (unsigned long long)sum.lost,
		(unsigned long long)sum.overwritten);
}

/* Each try has its own number, so one refused name does not block the next. */
void watch_snapshot(struct watch *w)
{
	struct perfring_snapshot_opts so = { .sz = sizeof(so), .wait = w->a.snapshot_wait };
	FILE *out = stdout, *f = stdout;
	char name[64], what[96];
	int n, err;

	snprintf(name, sizeof(name), "snapshot-%u.%s", ++w->snap_seq, w->a.json ? "json" : "txt");
	if (w->snap_dirfd >= 0 && !(f = snap_create(w, name))) {
		fprintf(stderr, "perfring-watch: snapshot %u: %s/%s: %s; not replaced, no snapshot "
			"taken (its records wait for the next)\n", w->snap_seq, w->a.snapshot_dir,
			name, strerror(errno));
		w->failed = true;
		return;
	}
	w->out = f;
	n = perfring_session_snapshot_opts(w->s, &so);
	w->out = out;
	err = f == out ? stdout_flush() : snap_close(f);
	if (n < 0) {
		fprintf(stderr, "perfring-watch: snapshot %u: %s\n", w->snap_seq,
			perfring_session_last_error(w->s));
		if (f != out)
			unlinkat(w->snap_dirfd, name, 0);   /* empty: nothing was taken */
		w->failed = true;
	} else if (err && f == out) {
		snprintf(what, sizeof(what), "snapshot %u of %d samples: stdout", w->snap_seq, n);
		watch_output_error(w, what, err);
	} else if (err) {
		fprintf(stderr, "perfring-watch: snapshot %u: %s/%s: %s; %d samples, the file has "
			"only part of them\n", w->snap_seq, w->a.snapshot_dir, name, strerror(err), n);
		w->failed = true;
	} else {
		report(w, n);
	}
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
