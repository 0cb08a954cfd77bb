/* SPDX-License-Identifier: MIT */
/* perfring-watch: the -- COMMAND child. It is forked first and waits on a
 * pipe, so the session can be opened on its pid (inherit covers what it
 * spawns) before it runs a single instruction of COMMAND; the loop's own
 * signal or child watcher is in place before it is released. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define END_GRACE_MS 2000

static void child_main(int go, char **argv)
{
	char c;
	ssize_t r;

	do
		r = read(go, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);     /* the watcher gave up before starting */
	execvp(argv[0], argv);
	fprintf(stderr, "perfring-watch: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int watch_child_spawn(struct watch *w)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[1]);
		child_main(p[0], w->a.command);
	}
	close(p[0]);
	w->child = pid;
	w->go_fd = p[1];
	return 0;
}

void watch_child_release(struct watch *w)
{
	if (w->go_fd < 0)
		return;
	if (write(w->go_fd, "g", 1) != 1)
		fprintf(stderr, "perfring-watch: releasing the command: %s\n", strerror(errno));
	close(w->go_fd);
	w->go_fd = -1;
}

/* Setup failed: the child sees EOF instead of "go", exits, and is reaped. */
void watch_child_abort(struct watch *w)
{
	if (w->go_fd >= 0)
		close(w->go_fd);
	w->go_fd = -1;
	if (w->child > 0 && !w->child_done)
		waitpid(w->child, &w->child_status, 0);
	w->child_done = true;
}

/* Non-blocking: records the status if the child has exited. */
void watch_child_reap(struct watch *w)
{
	int st;
	pid_t r;

	if (w->child <= 0 || w->child_done)
		return;
	r = waitpid(w->child, &st, WNOHANG);
	if (r == w->child)
		watch_child_exited(w, st);
	else if (r < 0 && errno == ECHILD)
		watch_child_exited(w, 0);   /* reaped elsewhere; status unknown */
}

static bool wait_for(struct watch *w, int ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i <= ms / 10; i++) {
		watch_child_reap(w);
		if (w->child_done)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* The run ended first (-d or a signal): SIGTERM, a grace period, SIGKILL. */
void watch_child_end(struct watch *w)
{
	if (w->child <= 0 || w->child_done)
		return;
	watch_child_release(w);
	kill(w->child, SIGTERM);
	if (wait_for(w, END_GRACE_MS))
		return;
	kill(w->child, SIGKILL);
	if (waitpid(w->child, &w->child_status, 0) < 0)
		w->child_status = 0;
	w->child_done = true;
}
