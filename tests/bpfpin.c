/* SPDX-License-Identifier: MIT */
/* "Another tool" for tests/test_watch_bpf.sh: loads the tests' BPF program
 * (tests/kbpf.c) for its own tgid, pins its PERF_EVENT_ARRAY at PIN, runs
 * CMD (perfring-watch --json) with its stdout through a pipe, makes N getpid
 * calls from a thread once CMD prints its start line (the main thread goes
 * on reading, so CMD never blocks on a full pipe), sends CMD a SIGINT once
 * they are made (perfring-watch then drains its rings and prints its
 * summary), passes CMD's output on and exits with CMD's status. The pin is removed on every way out.
 * usage: bpfpin PIN N CMD [ARGS...] */
#include "kbpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pin(int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)fd;
	return (int)syscall(SYS_bpf, BPF_OBJ_PIN, &a, sizeof(a));
}

static pid_t spawn(char **argv, FILE **out)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*out = fdopen(p[0], "r");
	return pid;
}

struct calls { long n; pid_t cmd; };

static void *calls(void *arg)
{
	const struct calls *c = arg;

	for (long i = 0; i < c->n; i++)
		syscall(SYS_getpid);
	kill(c->cmd, SIGINT);
	return NULL;
}

/* CMD's lines to stdout; the calls after its start line. */
static void relay(FILE *in, long n, pid_t cmd)
{
	struct calls c = { n, cmd };
	char line[4096];
	bool started = false;
	pthread_t t;

	while (fgets(line, sizeof(line), in)) {
		fputs(line, stdout);
		if (!started && strstr(line, "\"type\":\"start\"") &&
		    pthread_create(&t, NULL, calls, &c) == 0)
			started = true;
	}
	if (started)
		pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	char why[1024] = "";
	struct kbpf b;
	FILE *in = NULL;
	int status = 0, err;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: bpfpin PIN N CMD [ARGS...]\n");
		return 2;
	}
	if ((err = kbpf_open(&b, getpid(), 0, why, sizeof(why)))) {
		fprintf(stderr, "bpfpin: %s\n", why);
		return err == -EPERM ? 77 : 1;
	}
	if (pin(b.out_map, argv[1]) < 0) {
		fprintf(stderr, "bpfpin: BPF_OBJ_PIN %s: %s\n", argv[1], strerror(errno));
		kbpf_close(&b);
		return 1;
	}
	pid = spawn(argv + 3, &in);
	if (pid > 0 && in)
		relay(in, strtol(argv[2], NULL, 10), pid);
	if (pid > 0 && waitpid(pid, &status, 0) < 0)
		status = 1 << 8;
	if (in)
		fclose(in);
	unlink(argv[1]);
	kbpf_close(&b);
	fflush(stdout);
	return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
