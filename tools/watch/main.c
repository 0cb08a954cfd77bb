/* SPDX-License-Identifier: MIT */
/* perfring-watch: a live per-CPU view of perf_event ring delivery on the
 * event loop of your choice (libuv, libevent, libev or plain epoll), and,
 * built with WATCH_PROG=WATCH_PROG_EXPORTER, perfring-exporter.
 * See perfring-watch(1) and watch.h for how the files divide the work. */
#include "config.h"
#include "watch.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

struct loop_entry {
	enum watch_loop_kind kind;
	const char *name;
	int (*run)(struct watch *w);
};

/* In order of preference for the default. */
static const struct loop_entry loops[] = {
#ifdef HAVE_PERFRING_UV
	{ WATCH_LOOP_UV, "uv", watch_loop_uv },
#endif
#ifdef HAVE_PERFRING_EVENT
	{ WATCH_LOOP_EVENT, "event", watch_loop_event },
#endif
#ifdef HAVE_PERFRING_EV
	{ WATCH_LOOP_EV, "ev", watch_loop_ev },
#endif
	{ WATCH_LOOP_EPOLL, "epoll", watch_loop_epoll },
};

#define NLOOPS (sizeof(loops) / sizeof(loops[0]))

/* --overwrite: no loop adapter, the rings never wake anyone. */
static const struct loop_entry recorder = { WATCH_LOOP_DEFAULT, "recorder",
					    watch_loop_recorder };

static const struct loop_entry *pick_loop(enum watch_loop_kind kind)
{
	static const char *const names[] = {
		[WATCH_LOOP_UV] = "uv (libuv)", [WATCH_LOOP_EVENT] = "event (libevent)",
		[WATCH_LOOP_EV] = "ev (libev)", [WATCH_LOOP_EPOLL] = "epoll",
	};

	if (kind == WATCH_LOOP_DEFAULT)
		return &loops[0];
	for (size_t i = 0; i < NLOOPS; i++)
		if (loops[i].kind == kind)
			return &loops[i];
	fprintf(stderr, "perfring-watch: --loop %s: this build has no such adapter (built:",
		names[kind]);
	for (size_t i = 0; i < NLOOPS; i++)
		fprintf(stderr, " %s", loops[i].name);
	fprintf(stderr, ")\n");
	return NULL;
}

/* A parent may have left these blocked (shells do while they wait); the
 * loops' signal and child watchers (but for signalfd) would never fire. */
static void unblock_watched_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* perfring-exporter is this same program built with WATCH_PROG set: the
 * session, loop and counters are one code, only the output differs. */
#ifndef WATCH_PROG
#define WATCH_PROG WATCH_PROG_WATCH
#endif

int main(int argc, char **argv)
{
	static struct watch w = { .go_fd = -1, .snap_dirfd = -1,
				  .quiet = WATCH_PROG == WATCH_PROG_EXPORTER };
	const struct loop_entry *loop;
	int code;

	watch_stdio_init();     /* before any fd of ours can take 0, 1 or 2 */
	w.out = stdout;
	code = watch_args_parse_as(&w.a, WATCH_PROG, argc, argv);
	if (code)
		return code == 1 ? 0 : code;
	if ((code = watch_recorder_init(&w))) {
		watch_args_free(&w.a);
		return code;
	}
	unblock_watched_signals();
	watch_signals_init();
	loop = w.a.overwrite ? &recorder : pick_loop(w.a.loop);
	w.quiet |= w.a.overwrite;   /* only the snapshots are written */
	if (!loop)
		code = WATCH_EXIT_USAGE;
	else if (!(code = watch_session_open(&w))) {
		w.loop_name = loop->name;
		if (loop->run(&w) < 0)
			w.failed = true;
		code = watch_finish(&w);
	}
	watch_recorder_free(&w);
	watch_args_free(&w.a);
	return code;
}
