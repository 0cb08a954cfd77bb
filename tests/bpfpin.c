/* SPDX-License-Identifier: MIT */
/* "Another tool" that pins a BPF map for perfring-watch --bpf-map to read,
 * in one of two modes. The pin is removed on every way out; exit 77: BPF is
 * not permitted here (the test skips).
 *
 * bpfpin PIN N CMD [ARGS...] (tests/test_watch_bpf.sh): loads the tests'
 * BPF program (tests/kbpf.c) for its own tgid, pins its PERF_EVENT_ARRAY at
 * PIN, runs CMD (perfring-watch --json) with its stdout through a pipe,
 * makes N getpid calls from a thread once CMD prints its start line (the
 * main thread goes on reading, so CMD never blocks on a full pipe), sends
 * CMD a SIGINT once they are made (perfring-watch then drains its rings and
 * prints its summary), passes CMD's output on and exits with CMD's status.
 *
 * bpfpin --ringbuf PIN N [--array PIN2] (tools/tests/test_watch_ringbuf.sh):
 * loads the tests' ring-buffer program (KBPF_RB_DISCARD_ODD: of N calls, the
 * odd ones are submitted and the even ones discarded) for its own tgid, pins
 * its RINGBUF (1 MiB, 24-byte records) at PIN, and prints "pinned". Then,
 * for each line on stdin, it makes N getpid calls and prints "done"; at the
 * end of stdin it removes the pins and exits. With "--array PIN2" it also
 * pins an ARRAY map there (a map of neither kind) and its program at
 * PIN2_prog (not a map at all; a bpffs name has no dot). */
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

/* The PERF_EVENT_ARRAY mode: argv is PIN N CMD [ARGS...]. */
static int perf_array(int argc, char **argv)
{
	char why[1024] = "";
	struct kbpf b;
	FILE *in = NULL;
	int status = 0, err;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: bpfpin PIN N CMD [ARGS...]\n");
		return 2;
	}
	if ((err = kbpf_open(&b, getpid(), 0, why, sizeof(why)))) {
		fprintf(stderr, "bpfpin: %s\n", why);
		return err == -EPERM ? 77 : 1;
	}
	if (pin(b.out_map, argv[0]) < 0) {
		fprintf(stderr, "bpfpin: BPF_OBJ_PIN %s: %s\n", argv[0], strerror(errno));
		kbpf_close(&b);
		return 1;
	}
	pid = spawn(argv + 2, &in);
	if (pid > 0 && in)
		relay(in, strtol(argv[1], NULL, 10), pid);
	if (pid > 0 && waitpid(pid, &status, 0) < 0)
		status = 1 << 8;
	if (in)
		fclose(in);
	unlink(argv[0]);
	kbpf_close(&b);
	fflush(stdout);
	return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* The ring buffer's pin, and with --array the ARRAY map's and the
 * program's: 0, or -1 with errno. */
static int pin_ringbuf(const struct kbpf_rb *b, const char *path, const char *array,
		       const char *prog, int *afd)
{
	if (pin(b->map, path) < 0)
		return -1;
	if (!array)
		return 0;
	if ((*afd = kbpf_array_map(1)) < 0 || pin(*afd, array) < 0 || pin(b->prog, prog) < 0)
		return -1;
	return 0;
}

/* N calls for each line on stdin, each round told with "done". */
static void rounds(const struct kbpf_rb *b, long n)
{
	char line[64];

	printf("pinned\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
		printf("done %lld failed\n", (long long)kbpf_rb_failed(b));
		fflush(stdout);
	}
}

/* The RINGBUF mode: argv is PIN N [--array PIN2]. */
static int ringbuf(int argc, char **argv)
{
	const char *array = argc == 4 && !strcmp(argv[2], "--array") ? argv[3] : NULL;
	char why[1024] = "", prog[4096];
	struct kbpf_rb b;
	int err, afd = -1, code = 0;

	if (argc != 2 && !array) {
		fprintf(stderr, "usage: bpfpin --ringbuf PIN N [--array PIN2]\n");
		return 2;
	}
	if ((err = kbpf_rb_open(&b, getpid(), 1u << 20, KBPF_RB_DISCARD_ODD, 24, why,
				sizeof(why)))) {
		fprintf(stderr, "bpfpin: %s\n", why);
		return err == -EPERM ? 77 : 1;
	}
	snprintf(prog, sizeof(prog), "%s_prog", array ? array : "");
	if (pin_ringbuf(&b, argv[0], array, prog, &afd) < 0) {
		fprintf(stderr, "bpfpin: BPF_OBJ_PIN: %s\n", strerror(errno));
		code = 1;
	} else {
		rounds(&b, strtol(argv[1], NULL, 10));
	}
	unlink(argv[0]);
	if (array) {
		unlink(array);
		unlink(prog);
	}
	if (afd >= 0)
		close(afd);
	kbpf_rb_close(&b);
	return code;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--ringbuf"))
		return ringbuf(argc - 2, argv + 2);
	return perf_array(argc - 1, argv + 1);
}
