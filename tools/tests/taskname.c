/* SPDX-License-Identifier: MIT */
/* An exact workload for tools/tests/test_watch_by.sh: renames itself N times
 * (prctl PR_SET_NAME with FMT and the index, so task:task_rename fires N
 * times with N distinct names), then sends itself SIGNALS ignored SIGUSR1s
 * (signal:signal_generate fires for each) and sleeps 20 ms (a context
 * switch away from the last name). With GO, it first waits for one byte on
 * stdin, so a watcher can attach before anything happens.
 * usage: taskname N FMT SIGNALS [GO] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	long n = argc > 3 ? strtol(argv[1], NULL, 10) : -1;
	long sigs = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
	char name[64];

	if (n < 0 || sigs < 0) {
		fprintf(stderr, "usage: taskname N FMT SIGNALS [GO]\n");
		return 2;
	}
	signal(SIGUSR1, SIG_IGN);
	if (argc > 4 && read(STDIN_FILENO, name, 1) != 1)
		return 2;   /* the test gave up before starting */
	for (long i = 0; i < n; i++) {
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(name, sizeof(name), argv[2], i);
		prctl(PR_SET_NAME, name, 0, 0, 0);
	}
	for (long i = 0; i < sigs; i++)
		kill(getpid(), SIGUSR1);
	nanosleep(&nap, NULL);
	return 0;
}
