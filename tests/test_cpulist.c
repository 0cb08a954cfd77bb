/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/cpulist.h"
#include "base/sys.h"

/* Parses a NUL-terminated string without handing the NUL to the parser. */
static int parse(const char *s, int **cpus, size_t *n)
{
	return pr_cpulist_parse(s, strlen(s), cpus, n);
}

static void expect_list(const char *text, const int *want, size_t nwant)
{
	int *cpus = (int *)1;
	size_t n = 99, i;

	cr_assert_eq(parse(text, &cpus, &n), 0, "\"%s\" should parse", text);
	cr_assert_eq(n, nwant, "\"%s\": %zu CPUs, want %zu", text, n, nwant);
	for (i = 0; i < n; i++)
		cr_expect_eq(cpus[i], want[i], "\"%s\"[%zu] = %d, want %d", text, i, cpus[i],
			     want[i]);
	free(cpus);
}

static void expect_einval(const char *text)
{
	int *cpus = (int *)1;
	size_t n = 99;

	cr_expect_eq(parse(text, &cpus, &n), -EINVAL, "\"%s\" should be rejected", text);
	cr_expect_null(cpus, "\"%s\": cpus not reset on error", text);
	cr_expect_eq(n, 0, "\"%s\": n not reset on error", text);
}

Test(cpulist, single)
{
	static const int want[] = { 0 };

	expect_list("0", want, 1);
}

Test(cpulist, ranges)
{
	static const int want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };

	expect_list("0-3,8-11", want, 8);
}

Test(cpulist, trailing_newline_as_sysfs_writes_it)
{
	static const int want[] = { 0, 1 };

	expect_list("0-1\n", want, 2);
}

Test(cpulist, whitespace_around_items)
{
	static const int want[] = { 2, 5, 6 };

	expect_list(" 2 , 5-6 ", want, 3);
	expect_list("\t2,5 - 6\n", want, 3);
}

Test(cpulist, unsorted_input_comes_out_sorted)
{
	static const int want[] = { 1, 4, 5, 6, 9 };

	expect_list("9,4-6,1", want, 5);
}

Test(cpulist, single_cpu_range)
{
	static const int want[] = { 7 };

	expect_list("7-7", want, 1);
}

Test(cpulist, leading_zeros_are_decimal)
{
	static const int want[] = { 8, 10 };

	expect_list("08,010", want, 2);
}

Test(cpulist, empty_and_blank_lists)
{
	static const char *const blank[] = { "", "\n", "  \t\n" };
	size_t i, n;
	int *cpus;

	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		cpus = (int *)1;
		n = 99;
		cr_assert_eq(parse(blank[i], &cpus, &n), 0);
		cr_expect_null(cpus);
		cr_expect_eq(n, 0);
	}
	cpus = (int *)1;
	cr_assert_eq(pr_cpulist_parse(NULL, 0, &cpus, &n), 0);
	cr_expect_null(cpus);
}

Test(cpulist, bad_syntax)
{
	static const char *const bad[] = {
		"1-", "-1", "3-1", "1,,2", "a", "1-2-3", ",", "1,", ",1", "1 2",
		"0x1", "+1", "1;2", "1.5", "1-a", "--1", "1--2", "0-3,\n,4", "\n1\n2",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_einval(bad[i]);
}

Test(cpulist, duplicates_and_overlaps)
{
	expect_einval("1,1");
	expect_einval("0-3,3");
	expect_einval("0-3,2-5");
	expect_einval("4-6,0-4");
	expect_einval("5,0-9");
}

Test(cpulist, limit_is_exclusive)
{
	char text[64];
	int *cpus;
	size_t n;

	snprintf(text, sizeof(text), "%d", PR_CPU_MAX - 1);
	cr_assert_eq(parse(text, &cpus, &n), 0);
	cr_assert_eq(n, 1);
	cr_expect_eq(cpus[0], PR_CPU_MAX - 1);
	free(cpus);

	snprintf(text, sizeof(text), "%d", PR_CPU_MAX);
	expect_einval(text);
	snprintf(text, sizeof(text), "0-%d", PR_CPU_MAX);
	expect_einval(text);
}

Test(cpulist, whole_range_is_accepted)
{
	char text[64];
	int *cpus;
	size_t n, i;

	snprintf(text, sizeof(text), "0-%d", PR_CPU_MAX - 1);
	cr_assert_eq(parse(text, &cpus, &n), 0);
	cr_assert_eq(n, (size_t)PR_CPU_MAX);
	for (i = 0; i < n; i++)
		if (cpus[i] != (int)i)
			cr_assert_fail("cpus[%zu] = %d", i, cpus[i]);
	free(cpus);
}

Test(cpulist, numbers_that_overflow_int)
{
	expect_einval("2147483648");
	expect_einval("4294967296");
	expect_einval("4294967297");
	expect_einval("18446744073709551617");
	expect_einval("0-99999999999999999999999999");
	expect_einval("99999999999999999999999999999999999999-1");
}

Test(cpulist, uses_len_not_nul)
{
	static const char text[] = { '1', '-', '2', ',', '9' }; /* no NUL */
	int *cpus;
	size_t n;

	cr_assert_eq(pr_cpulist_parse(text, sizeof(text), &cpus, &n), 0);
	cr_assert_eq(n, 3);
	cr_expect_eq(cpus[2], 9);
	free(cpus);
	/* only the first 3 bytes: "1-2" */
	cr_assert_eq(pr_cpulist_parse(text, 3, &cpus, &n), 0);
	cr_assert_eq(n, 2);
	cr_expect_eq(cpus[1], 2);
	free(cpus);
	/* cut inside the range: "1-" */
	cr_expect_eq(pr_cpulist_parse(text, 2, &cpus, &n), -EINVAL);
}

Test(cpulist, embedded_nul_is_rejected)
{
	static const char text[] = { '1', '\0', '2' };
	int *cpus;
	size_t n;

	cr_expect_eq(pr_cpulist_parse(text, sizeof(text), &cpus, &n), -EINVAL);
}

Test(cpulist, bad_arguments)
{
	int *cpus;
	size_t n;

	cr_expect_eq(pr_cpulist_parse("1", 1, NULL, &n), -EINVAL);
	cr_expect_eq(pr_cpulist_parse("1", 1, &cpus, NULL), -EINVAL);
	cr_expect_eq(pr_cpulist_parse(NULL, 1, &cpus, &n), -EINVAL);
}

/* The machine's own online list must parse and agree with sysconf. */
Test(cpulist, sysfs_online_list)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char text[4096];
	size_t len, n;
	int *cpus;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (!f)
		cr_skip_test("no /sys/devices/system/cpu/online");
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	cr_assert_eq(pr_cpulist_parse(text, len, &cpus, &n), 0);
	cr_expect_eq((long)n, online);
	free(cpus);
}

Test(cpulist, has)
{
	int *cpus;
	size_t n;
	int cpu;

	cr_assert_eq(parse("0-3,8-11,40", &cpus, &n), 0);
	for (cpu = -2; cpu < 64; cpu++) {
		int want = (cpu >= 0 && cpu <= 3) || (cpu >= 8 && cpu <= 11) || cpu == 40;

		cr_expect_eq(!!pr_cpulist_has(cpus, n, cpu), want, "cpu %d", cpu);
	}
	free(cpus);
	cr_expect_eq(pr_cpulist_has(NULL, 0, 0), 0);
}

Test(cpulist, has_single_element)
{
	static const int one[] = { 5 };

	cr_expect(pr_cpulist_has(one, 1, 5));
	cr_expect_not(pr_cpulist_has(one, 1, 4));
	cr_expect_not(pr_cpulist_has(one, 1, 6));
	cr_expect_not(pr_cpulist_has(one, 0, 5));
}

static int fail_nth_alloc(enum pr_sys_call call, void *ctx)
{
	int *left = ctx;

	if (call != PR_SYS_MALLOC && call != PR_SYS_CALLOC && call != PR_SYS_REALLOC)
		return 0;
	return (*left)-- == 0 ? ENOMEM : 0;
}

/* Every allocation failure gives -ENOMEM with nothing returned (ASan builds
 * also check that nothing leaks). */
Test(cpulist, allocation_failures)
{
	int nth, left, rc;
	int *cpus;
	size_t n;

	for (nth = 0;; nth++) {
		left = nth;
		pr_fault_set(fail_nth_alloc, &left);
		cpus = (int *)1;
		rc = parse("0-3,8", &cpus, &n);
		pr_fault_set(NULL, NULL);
		if (rc == 0)
			break;
		cr_assert_eq(rc, -ENOMEM, "failing allocation %d gave %d", nth, rc);
		cr_expect_null(cpus);
		cr_assert_lt(nth, 100, "allocation failures never stop");
	}
	cr_expect_gt(nth, 0, "the parse allocates nothing?");
	cr_expect_eq(n, 5);
	free(cpus);
}
