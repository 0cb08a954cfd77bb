/* SPDX-License-Identifier: MIT */
/* CPU lists as sysfs writes them: "0-3,8-11\n". */
#ifndef PR_CPULIST_H
#define PR_CPULIST_H

#include <stddef.h>

#define PR_CPU_MAX 65536 /* highest CPU number accepted, exclusive */

/* Parses text (len bytes, need not be NUL-terminated) into a sorted array of
 * unique CPUs (heap, caller frees; NULL with *n = 0 for an empty list).
 * Accepts ranges "a-b", singles, commas, surrounding whitespace and a trailing
 * newline. Overlaps and duplicates are -EINVAL. Returns 0, -EINVAL for bad
 * syntax, a reversed range, or a CPU >= PR_CPU_MAX; -ENOMEM. */
int pr_cpulist_parse(const char *text, size_t len, int **cpus, size_t *n);

/* pr_cpulist_find's binary search. */
int pr_cpulist_search(const int *cpus, size_t n, int cpu);

/* cpu's index in the sorted array, or -1. Inline for the usual list,
 * 0..n-1, where cpu is its own index: every per-CPU call looks its CPU up. */
static inline int pr_cpulist_find(const int *cpus, size_t n, int cpu)
{
	if (cpus && cpu >= 0 && (size_t)cpu < n && cpus[cpu] == cpu)
		return cpu;
	return pr_cpulist_search(cpus, n, cpu);
}

/* Whether cpu is in the sorted array. */
int pr_cpulist_has(const int *cpus, size_t n, int cpu);

#endif
