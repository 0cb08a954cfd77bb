/* SPDX-License-Identifier: MIT */
/* perfring-watch: what every loop's glue calls. The glue owns its watchers;
 * this file owns the run: when it starts, each tick, what a signal, a closed
 * stdout or the child's exit means, and the final drain and summary. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bit n: fd n was closed when we started. */
static unsigned stdio_closed;

/* fd on a pipe whose read end is closed, as if its reader had gone. */
static void broken_pipe(int fd)
{
	int p[2];

	if (pipe(p) < 0)
		return;
	if (p[1] != fd)
		dup2(p[1], fd);
	if (p[0] != fd)
		close(p[0]);
	if (p[1] != fd)
		close(p[1]);
}

static void dev_null(int fd, int flags)
{
	int nfd = open("/dev/null", flags);

	if (nfd >= 0 && nfd != fd) {
		dup2(nfd, fd);
		close(nfd);
	}
}

/* A daemon's closed fd 1 would be the first ring's, and the output would go
 * into it. A closed stdout has no reader: the first write ends the run as
 * SIGPIPE does (R13), and a run that writes none (--snapshot-dir, the
 * exporter) is not disturbed. */
void watch_stdio_init(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		stdio_closed |= 1u << fd;
		if (fd == STDOUT_FILENO)
			broken_pipe(fd);
		else
			dev_null(fd, fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
	}
}

/* COMMAND gets the fds it was given: those closed are closed again. */
void watch_stdio_child(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (stdio_closed & (1u << fd))
			close(fd);
}

/* What the loops do not watch arrives here. */
static volatile sig_atomic_t hup_seen, pipe_seen;

static void on_hup(int signo)
{
	int e = errno;

	(void)signo;
	hup_seen = 1;
	kill(getpid(), SIGTERM);    /* every loop watches SIGTERM: end the run the same way */
	errno = e;
}

static void on_pipe(int signo)
{
	(void)signo;
	pipe_seen = 1;              /* the write fails with EPIPE instead of killing us */
}

/* A disposition inherited as SIG_IGN (nohup, a parent ignoring SIGPIPE) is
 * kept, and COMMAND inherits it; a caught one is SIG_DFL again at its exec. */
static void catch_unless_ignored(int signo, void (*fn)(int))
{
	struct sigaction old, sa = { .sa_handler = fn };

	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		sigaction(signo, &sa, NULL);
}

void watch_signals_init(void)
{
	catch_unless_ignored(SIGHUP, on_hup);
	catch_unless_ignored(SIGPIPE, on_pipe);
}

static void held_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* Once the run ends, a second Ctrl-C must not kill us before the command's
 * group is gone: the loops may already have put SIG_DFL back. */
void watch_hold_signals(void)
{
	sigset_t set;

	held_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Up to ms for a held signal: its number, or 0. */
int watch_wait_held(int ms)
{
	sigset_t set;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int signo;

	held_set(&set);
	signo = sigtimedwait(&set, NULL, &ts);
	return signo > 0 ? signo : 0;
}

/* stdout's reader has gone (SIGPIPE caught, or ignored and the write said EPIPE). */
static bool output_gone(struct watch *w)
{
	if (!w->out_gone && (pipe_seen || (ferror(stdout) && errno == EPIPE))) {
		w->out_gone = true;
		watch_request_stop(w);
	}
	return w->out_gone;
}

static void on_loop_error(int cpu, int err, void *ctx)
{
	struct watch *w = ctx;
	int slot = cpu >= 0 && cpu <= w->max_cpu ? w->slot_of_cpu[cpu] : -1;

	if (err != -EPIPE) {
		fprintf(stderr, "perfring-watch: CPU %d: %s; no longer watched\n", cpu,
			perfring_strerror(err));
		return;
	}
	/* HUP: the watched process and everything it inherited have exited. */
	if (slot >= 0 && !w->cpus[slot].hup) {
		w->cpus[slot].hup = true;
		w->nhup++;
	}
	if (w->a.pid && w->nhup >= w->non)
		watch_request_stop(w);
}

void watch_output_error(struct watch *w, const char *what, int err)
{
	if (err == EPIPE) {
		pipe_seen = 1;
		output_gone(w);
		return;
	}
	fprintf(stderr, "%s: %s: %s\n", watch_prog_name(&w->a), what, strerror(err));
	w->failed = true;
}

void watch_loop_opts(struct watch *w, struct perfring_loop_opts *lo)
{
	*lo = (struct perfring_loop_opts){
		.sz = sizeof(*lo),
		.budget = w->a.budget,
		.on_error = on_loop_error,
		.ctx = w,
		.order_window_ns = w->a.order_window_ns,    /* --print's lines in time order */
	};
}

/* The loop's watchers are in place: the clock starts and the command runs. */
void watch_started(struct watch *w)
{
	w->t0_ns = watch_now_ns();
	w->last_tick_ns = w->t0_ns;
	if (w->a.duration_s > 0)
		w->end_ns = w->t0_ns + (uint64_t)(w->a.duration_s * 1e9);
	watch_view_start(w);
	if (!output_gone(w))
		watch_child_release(w);
}

void watch_request_stop(struct watch *w)
{
	if (w->stopping)
		return;
	watch_hold_signals();
	w->stopping = true;
	if (w->loop_stop)
		w->loop_stop(w);
}

void watch_loop_failed(struct watch *w, const char *what, int err)
{
	fprintf(stderr, "perfring-watch: %s: %s\n", what, perfring_strerror(err));
	w->failed = true;
	watch_request_stop(w);
}

static void show_interval(struct watch *w, uint64_t now)
{
	struct watch_row *rows = calloc(w->ncpu ? w->ncpu : 1, sizeof(*rows)), total;

	if (!rows)
		return;
	w->nrows = 0;
	for (size_t i = 0; i < w->ncpu; i++)
		if (w->cpus[i].on)
			watch_row_interval(w, i, &rows[w->nrows++]);
	watch_row_total(w, rows, false, &total);
	watch_view_interval(w, rows, &total, (double)(now - w->last_tick_ns) / 1e9);
	watch_interval_reset(w);
	free(rows);
}

void watch_tick(struct watch *w)
{
	uint64_t now = watch_now_ns();

	w->ticks++;
	show_interval(w, now);
	output_gone(w);
	w->last_tick_ns = now;
	if (w->end_ns && now + 1000000 >= w->end_ns)
		watch_request_stop(w);
	/* A SIGCHLD that raced the watcher's setup is caught here at the latest. */
	watch_child_reap(w);
}

/* Until the next whole second of the run (or the end of -d), in ms. */
int watch_next_tick_ms(const struct watch *w)
{
	uint64_t now = watch_now_ns(), next = w->t0_ns + (w->ticks + 1) * WATCH_NS;

	if (w->end_ns && next > w->end_ns)
		next = w->end_ns;
	return next > now ? (int)((next - now + 999999) / 1000000) : 0;
}

void watch_signal(struct watch *w, int signo)
{
	if (signo == SIGCHLD) {
		watch_child_reap(w);
		return;
	}
	if (signo == SIGTERM && hup_seen)
		signo = SIGHUP;     /* forwarded by on_hup */
	if (!w->signo)
		w->signo = signo;
	watch_request_stop(w);
}

void watch_child_exited(struct watch *w, int status)
{
	w->child_done = true;
	w->child_status = status;
	watch_request_stop(w);
}

static int exit_code(const struct watch *w)
{
	if (w->failed)
		return WATCH_EXIT_FAIL;
	if (w->child > 0 && w->child_released) {
		if (WIFEXITED(w->child_status))
			return WEXITSTATUS(w->child_status);
		if (WIFSIGNALED(w->child_status))
			return 128 + WTERMSIG(w->child_status);
	}
	return w->out_gone ? 128 + SIGPIPE : 0;
}

/* What the rings and ring buffers hold once stopped. --print's window asks
 * for time order: one merged parse delivers the rest in order, with what
 * the window kept. */
static void drain_rest(struct watch *w)
{
	if (w->a.overwrite)
		return;
	if (w->a.order_window_ns) {
		perfring_session_parse_all(w->s);
		return;
	}
	for (size_t i = 0; i < w->ncpu; i++)
		perfring_session_parse_for_cpu(w->s, w->cpus[i].cpu);
	watch_rb_drain(w);
}

/* After the glue has detached: nothing new is written, the rest of every
 * ring is delivered, then the summary, then everything is freed. */
int watch_finish(struct watch *w)
{
	struct watch_row *rows = calloc(w->ncpu ? w->ncpu : 1, sizeof(*rows)), total;
	int code;

	w->loop_stop = NULL;
	w->stopping = true;
	watch_hold_signals();
	watch_child_end(w);
	perfring_session_stop(w->s);
	if (w->a.overwrite)
		watch_snapshot(w);      /* the last one: what the rings hold at the end */
	drain_rest(w);
	code = exit_code(w);
	if (rows && w->t0_ns && !output_gone(w)) {
		w->nrows = 0;
		for (size_t i = 0; i < w->ncpu; i++)
			if (w->cpus[i].ever)
				watch_row_run(w, i, &rows[w->nrows++]);
		watch_row_total(w, rows, true, &total);
		watch_view_summary(w, rows, &total, (double)(watch_now_ns() - w->t0_ns) / 1e9,
				   code);
		if (output_gone(w))
			code = exit_code(w);    /* the summary was the write that failed */
	}
	free(rows);
	perfring_session_free(w->s);
	w->s = NULL;
	watch_cpus_free(w);
	watch_profile_close(w);
	return code;
}
