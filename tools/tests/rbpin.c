/* SPDX-License-Identifier: MIT */
/* "Another tool" with a BPF ring buffer, for test_watch_ringbuf.sh: loads
 * the tests' ring-buffer program (tests/kbpf.c, KBPF_RB_DISCARD_ODD: of N
 * calls, the odd ones are submitted and the even ones discarded) for its own
 * tgid, pins its RINGBUF (1 MiB, 24-byte records) at PIN, and prints
 * "pinned". Then, for each line on stdin, it makes N getpid calls and prints
 * "done"; at the end of stdin it removes the pins and exits. With
 * "--array PIN2" it also pins an ARRAY map there (a map of neither kind)
 * and its program at PIN2_prog (not a map at all; a bpffs name has no dot).
 * Exit 77: BPF is not permitted here (the test skips).
 * usage: rbpin PIN N [--array PIN2] */
#include "kbpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pin(int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)fd;
	return (int)syscall(SYS_bpf, BPF_OBJ_PIN, &a, sizeof(a));
}

int main(int argc, char **argv)
{
	const char *array = argc == 5 && !strcmp(argv[3], "--array") ? argv[4] : NULL;
	char why[1024] = "", line[64], prog[4096];
	struct kbpf_rb b;
	long n;
	int err, afd = -1, code = 0;

	if (argc != 3 && !array) {
		fprintf(stderr, "usage: rbpin PIN N [--array PIN2]\n");
		return 2;
	}
	n = strtol(argv[2], NULL, 10);
	if ((err = kbpf_rb_open(&b, getpid(), 1u << 20, KBPF_RB_DISCARD_ODD, 24, why,
				sizeof(why)))) {
		fprintf(stderr, "rbpin: %s\n", why);
		return err == -EPERM ? 77 : 1;
	}
	snprintf(prog, sizeof(prog), "%s_prog", array ? array : "");
	if (pin(b.map, argv[1]) < 0 ||
	    (array && ((afd = kbpf_array_map(1)) < 0 || pin(afd, array) < 0 ||
		       pin(b.prog, prog) < 0))) {
		fprintf(stderr, "rbpin: BPF_OBJ_PIN: %s\n", strerror(errno));
		code = 1;
	}
	if (!code) {
		printf("pinned\n");
		fflush(stdout);
	}
	while (!code && fgets(line, sizeof(line), stdin)) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
		printf("done %lld failed\n", (long long)kbpf_rb_failed(&b));
		fflush(stdout);
	}
	unlink(argv[1]);
	if (array) {
		unlink(array);
		unlink(prog);
	}
	if (afd >= 0)
		close(afd);
	kbpf_rb_close(&b);
	return code;
}
