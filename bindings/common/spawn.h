/* SPDX-License-Identifier: MIT */
/* A command started stopped, for the bindings' command= option: the child
 * waits on a pipe until the session watching it is started (pid = the
 * child, enable_on_exec), then execs, so every event from its exec on is
 * seen. Shared by the Node addon and the Python module. */
#ifndef PR_BINDINGS_SPAWN_H
#define PR_BINDINGS_SPAWN_H

#include <sys/types.h>

struct pr_spawn {
	pid_t pid;   /* the child, -1 once reaped or never made */
	int go;      /* write end: one byte lets the child exec; -1 once used */
	int status;  /* read end of a CLOEXEC pipe: EOF on exec, else its errno */
};

/* Forks argv[0] (found on PATH) stopped before its exec. 0 or -errno
 * (EINVAL for an empty argv). sp is left with pid -1 on failure. */
int pr_spawn_stopped(char *const argv[], struct pr_spawn *sp);

/* Lets the child exec and waits until it has: 0, or -errno of a failed exec
 * (ENOENT for a missing program; the child has then exited 127 and is
 * reaped). */
int pr_spawn_release(struct pr_spawn *sp);

/* A child never released (the session failed to start): killed and reaped. */
void pr_spawn_abort(struct pr_spawn *sp);

#endif
