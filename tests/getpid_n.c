/* SPDX-License-Identifier: MIT */
/* An exact workload for tools/tests/test_watch.sh: calls getpid(2) exactly N
 * times (the raw syscall, never a cached wrapper), then exits with STATUS. With
 * FIFO, it first reads FIFO to its end, so a watcher can attach with -p
 * before any call is made.
 * usage: getpid_n N [STATUS [FIFO]] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int wait_for_go(const char *fifo)
{
	char buf[64];
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0) {
		perror(fifo);
		return -1;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : -1;

	if (n < 0) {
		fprintf(stderr, "usage: getpid_n N [STATUS [FIFO]]\n");
		return 2;
	}
	if (argc > 3 && wait_for_go(argv[3]) < 0)
		return 2;
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	return argc > 2 ? atoi(argv[2]) : 0;
}
