/* SPDX-License-Identifier: MIT */
/*
 * CPU-list parser on hostile bytes.
 * fuzz-sources: core/kernel/cpulist.c core/base/sys.c
 *
 * The input, in an exact-size heap copy, goes to pr_cpulist_parse(). A list
 * it accepts must be sorted, unique and in range; written back as ranges it
 * must parse to the same CPUs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static void check_sorted(const int *cpus, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		CHECK(cpus[i] >= 0 && cpus[i] < PR_CPU_MAX);
		CHECK(i == 0 || cpus[i - 1] < cpus[i]);
		CHECK(pr_cpulist_has(cpus, n, cpus[i]));
		if (i + 1 < n && cpus[i + 1] > cpus[i] + 1)
			CHECK(!pr_cpulist_has(cpus, n, cpus[i] + 1));
	}
	CHECK(!pr_cpulist_has(cpus, n, -1));
	CHECK(!pr_cpulist_has(cpus, n, PR_CPU_MAX));
}

/* Writes cpus as "a-b,c,..." into a heap string; *len gets its length. */
static char *render(const int *cpus, size_t n, size_t *len)
{
	char *out = malloc(n * 24 + 1);
	size_t i = 0, j, o = 0;

	if (!out)
		abort();
	while (i < n) {
		for (j = i; j + 1 < n && cpus[j + 1] == cpus[j] + 1; j++)
			;
		o += (size_t)sprintf(out + o, "%s%d", o ? "," : "", cpus[i]);
		if (j > i)
			o += (size_t)sprintf(out + o, "-%d", cpus[j]);
		i = j + 1;
	}
	*len = o;
	return out;
}

static void check_round_trip(const int *cpus, size_t n)
{
	size_t len, n2;
	char *text = render(cpus, n, &len);
	int *again;

	CHECK(pr_cpulist_parse(text, len, &again, &n2) == 0);
	CHECK(n2 == n);
	CHECK(n == 0 || memcmp(again, cpus, n * sizeof(*cpus)) == 0);
	free(again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	int *cpus;
	size_t n;
	int rc;

	if (!text)
		abort();
	if (size)
		memcpy(text, data, size);
	rc = pr_cpulist_parse(text, size, &cpus, &n);
	if (rc) {
		CHECK(rc == -EINVAL);
		CHECK(cpus == NULL && n == 0);
	} else {
		CHECK(!n == !cpus);
		check_sorted(cpus, n);
		check_round_trip(cpus, n);
	}
	free(cpus);
	free(text);
	return 0;
}
