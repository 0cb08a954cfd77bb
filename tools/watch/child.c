/* SPDX-License-Identifier: MIT */
/* perfring-watch: the -- COMMAND child and its process group. The child is
 * forked first, leads a process group of its own and waits on a pipe, so the
 * session is opened on its pid (enable_on_exec: counting starts at its exec;
 * inherit covers what it spawns) before COMMAND runs; the loop's signal or
 * child watcher is in place before it is released. perfring-watch is the
 * subreaper of what it starts, so orphans are reaped here, and the run ends
 * only once the whole group is gone. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define END_GRACE_MS 2000   /* SIGTERM to SIGKILL */
#define KILL_WAIT_MS 1000   /* SIGKILL to giving up on a task stuck in the kernel */

static void child_main(const struct watch *w, int go, char **argv)
{
	char c;
	ssize_t r;

	setpgid(0, 0);
	do
		r = read(go, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);     /* the watcher gave up before starting */
	watch_recorder_child(w);
	watch_stdio_child();
	execvp(argv[0], argv);
	fprintf(stderr, "perfring-watch: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int watch_child_spawn(struct watch *w)
{
	int p[2];
	pid_t pid;

	/* Orphans of the group come to us, not to an init that may never reap
	 * them (a zombie would keep the group alive to kill(2)). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
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
		child_main(w, p[0], w->a.command);
	}
	/* Both sides set it, so the group exists whichever runs first. */
	setpgid(pid, pid);
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
	else
		w->child_released = true;
	close(w->go_fd);
	w->go_fd = -1;
}

/* Non-blocking: reaps every child that has exited (COMMAND, whose status is
 * kept, and orphans of its group). */
void watch_child_reap(struct watch *w)
{
	int st;
	pid_t r;

	if (w->child <= 0)
		return;
	while ((r = waitpid(-1, &st, WNOHANG)) > 0)
		if (r == w->child && !w->child_done)
			watch_child_exited(w, st);
	if (r < 0 && errno == ECHILD && !w->child_done)
		watch_child_exited(w, 0);   /* reaped by the loop's watcher, which says how */
}

static bool group_gone(struct watch *w)
{
	watch_child_reap(w);
	return w->child_done && kill(-w->child, 0) < 0 && errno == ESRCH;
}

/* Up to ms for every member of the group to exit; a further signal while the
 * run ends (held since the stop) cuts it short when `hurry`. */
static bool wait_group(struct watch *w, int ms, bool hurry)
{
	for (int i = 0; i <= ms / 10; i++) {
		if (group_gone(w))
			return true;
		if (watch_wait_held(10) && hurry)
			return false;
	}
	return group_gone(w);
}

/* Every way out ends here: SIGTERM to the whole group (what the command left
 * running included), 2 s, then SIGKILL. */
void watch_child_end(struct watch *w)
{
	if (w->child <= 0)
		return;
	watch_hold_signals();
	if (w->go_fd >= 0)
		close(w->go_fd);    /* never released: it exits on EOF */
	w->go_fd = -1;
	if (group_gone(w))
		return;
	kill(-w->child, SIGTERM);
	kill(-w->child, SIGCONT);   /* a stopped member acts on SIGTERM once continued */
	if (wait_group(w, END_GRACE_MS, true))
		return;
	kill(-w->child, SIGKILL);
	if (wait_group(w, KILL_WAIT_MS, false))
		return;
	fprintf(stderr, "perfring-watch: process group %d still has members after SIGKILL\n",
		(int)w->child);
	if (!w->child_done)
		watch_child_exited(w, SIGKILL);     /* the wait status of a SIGKILLed task */
}

/* Setup failed: the child, still waiting, is ended and reaped. */
void watch_child_abort(struct watch *w)
{
	watch_child_end(w);
}
