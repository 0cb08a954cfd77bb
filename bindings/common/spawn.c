/* SPDX-License-Identifier: MIT */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: only async-signal-safe calls (the parent may have threads). */
static void __attribute__((noreturn)) child(char *const argv[], int go_r, int st_w)
{
	char c;
	int err;
	ssize_t n;

	do
		n = read(go_r, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		execvp(argv[0], argv);
	err = n == 1 ? errno : ECANCELED;
	(void)!write(st_w, &err, sizeof(err));
	_exit(127);
}

int pr_spawn_stopped(char *const argv[], struct pr_spawn *sp)
{
	int go[2], st[2], err;

	sp->pid = -1;
	sp->go = sp->status = -1;
	if (!argv || !argv[0] || !argv[0][0])
		return -EINVAL;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(st, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	sp->pid = fork();
	if (sp->pid == 0) {
		close(go[1]);
		close(st[0]);
		child(argv, go[0], st[1]);
	}
	err = sp->pid < 0 ? -errno : 0;
	close(go[0]);
	close(st[1]);
	sp->go = go[1];
	sp->status = st[0];
	if (err) {
		close_fd(&sp->go);
		close_fd(&sp->status);
	}
	return err;
}

static void reap(struct pr_spawn *sp)
{
	while (sp->pid > 0 && waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
		;
	sp->pid = -1;
}

int pr_spawn_release(struct pr_spawn *sp)
{
	char c = 1;
	int child_err = 0;
	ssize_t n;

	if (sp->pid <= 0 || sp->go < 0)
		return -EINVAL;
	do
		n = write(sp->go, &c, 1);
	while (n < 0 && errno == EINTR);
	close_fd(&sp->go);
	do
		n = read(sp->status, &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close_fd(&sp->status);
	if (n == (ssize_t)sizeof(child_err)) {
		reap(sp);
		return -(child_err ? child_err : ECHILD);
	}
	return 0;
}

void pr_spawn_abort(struct pr_spawn *sp)
{
	close_fd(&sp->go);   /* the child reads EOF and exits 127 without exec */
	close_fd(&sp->status);
	if (sp->pid > 0)
		kill(sp->pid, SIGKILL);
	reap(sp);
}
