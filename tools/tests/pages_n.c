/* SPDX-License-Identifier: MIT */
/* An exact page-fault workload for tools/tests/test_watch_signals.sh: maps
 * N fresh anonymous pages and writes one byte to each, so it takes exactly N
 * more page faults than with N = 0 (its start-up is the same either way).
 * usage: pages_n N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p;

	if (n < 0 || n > 1L << 20 || page <= 0) {
		fprintf(stderr, "usage: pages_n N (0 to 1048576)\n");
		return 2;
	}
	/* One page more, so N = 0 maps too and both runs make the same calls. */
	p = mmap(NULL, (size_t)(n + 1) * (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	return 0;
}
