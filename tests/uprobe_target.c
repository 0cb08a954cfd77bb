/* SPDX-License-Identifier: MIT */
/* A uprobe target: calls prtest_uprobe_fn exactly N times, then exits.
 * usage: uprobe_target N */
#include <stdio.h>
#include <stdlib.h>

int prtest_uprobe_fn(int x);

__attribute__((noinline, used)) int prtest_uprobe_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	volatile int acc = 0;
	long n, i;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) < 0) {
		fprintf(stderr, "usage: uprobe_target N\n");
		return 2;
	}
	for (i = 0; i < n; i++)
		acc += prtest_uprobe_fn((int)i);
	return acc == -1;
}
