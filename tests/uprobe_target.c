/* SPDX-License-Identifier: MIT */
/* A uprobe target: calls prtest_uprobe_fn exactly N times, then exits.
 * usage: uprobe_target N */
#include <stdio.h>
#include <stdlib.h>

unsigned prtest_uprobe_fn(unsigned x);

/* Unsigned: the sum wraps, which a signed one may not (UBSan). */
__attribute__((noinline, used)) unsigned prtest_uprobe_fn(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	volatile unsigned acc = 0;
	long n, i;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) < 0) {
		fprintf(stderr, "usage: uprobe_target N\n");
		return 2;
	}
	for (i = 0; i < n; i++)
		acc += prtest_uprobe_fn((unsigned)i);
	return acc == 1; /* never: only keeps acc alive */
}
