/* SPDX-License-Identifier: MIT */
/* Parsing CPU lists as sysfs writes them. */
#include "kernel/cpulist.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/sys.h"
#include "base/text.h"

#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)
#define MAP_WORDS ((PR_CPU_MAX + WORD_BITS - 1) / WORD_BITS)

struct cursor {
	const char *p;
	const char *end;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && is_space(*c->p))
		c->p++;
}

static bool at(const struct cursor *c, char ch)
{
	return c->p < c->end && *c->p == ch;
}

/* A decimal CPU number below PR_CPU_MAX, with optional whitespace around it.
 * Digits past the limit are still consumed so "99999999999" cannot wrap. */
static int read_cpu(struct cursor *c, unsigned int *out)
{
	unsigned long v = 0;
	bool big = false;

	skip_space(c);
	if (c->p >= c->end || !is_digit(*c->p))
		return -EINVAL;
	while (c->p < c->end && is_digit(*c->p)) {
		if (!big)
			v = v * 10 + (unsigned long)(*c->p - '0');
		if (v >= PR_CPU_MAX)
			big = true;
		c->p++;
	}
	skip_space(c);
	if (big)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static bool map_test(const unsigned long *map, unsigned int cpu)
{
	return map[cpu / WORD_BITS] & (1ul << (cpu % WORD_BITS));
}

static void map_set(unsigned long *map, unsigned int cpu)
{
	map[cpu / WORD_BITS] |= 1ul << (cpu % WORD_BITS);
}

/* Marks lo..hi; a CPU already marked means an overlap or duplicate. */
static int mark_range(unsigned long *map, unsigned int lo, unsigned int hi, size_t *count)
{
	unsigned int cpu;

	if (lo > hi)
		return -EINVAL;
	for (cpu = lo; cpu <= hi; cpu++) {
		if (map_test(map, cpu))
			return -EINVAL;
		map_set(map, cpu);
	}
	*count += hi - lo + 1;
	return 0;
}

static int read_item(struct cursor *c, unsigned long *map, size_t *count)
{
	unsigned int lo, hi;
	int err;

	err = read_cpu(c, &lo);
	if (err)
		return err;
	hi = lo;
	if (at(c, '-')) {
		c->p++;
		err = read_cpu(c, &hi);
		if (err)
			return err;
	}
	return mark_range(map, lo, hi, count);
}

static int fill_map(const char *text, size_t len, unsigned long *map, size_t *count)
{
	struct cursor c = { text, text + len };
	int err;

	for (;;) {
		err = read_item(&c, map, count);
		if (err)
			return err;
		if (c.p == c.end)
			return 0;
		if (!at(&c, ','))
			return -EINVAL;
		c.p++;
	}
}

static int map_to_array(const unsigned long *map, size_t count, int **cpus)
{
	int *arr = pr_malloc(count * sizeof(*arr));
	size_t i = 0;
	unsigned int cpu;

	if (!arr)
		return -ENOMEM;
	for (cpu = 0; cpu < PR_CPU_MAX && i < count; cpu++) {
		if (!map[cpu / WORD_BITS]) {
			cpu += WORD_BITS - 1;
			continue;
		}
		if (map_test(map, cpu))
			arr[i++] = (int)cpu;
	}
	*cpus = arr;
	return 0;
}

static bool all_space(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_space(text[i]))
			return false;
	return true;
}

int pr_cpulist_parse(const char *text, size_t len, int **cpus, size_t *n)
{
	unsigned long *map;
	size_t count = 0;
	int err;

	if (!cpus || !n || (!text && len))
		return -EINVAL;
	*cpus = NULL;
	*n = 0;
	if (all_space(text, len))
		return 0;
	map = pr_calloc(MAP_WORDS, sizeof(*map));
	if (!map)
		return -ENOMEM;
	err = fill_map(text, len, map, &count);
	if (!err)
		err = map_to_array(map, count, cpus);
	free(map);
	if (!err)
		*n = count;
	return err;
}

int pr_cpulist_search(const int *cpus, size_t n, int cpu)
{
	size_t lo = 0, hi = n, mid;

	if (!cpus)
		return -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cpus[mid] < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && cpus[lo] == cpu ? (int)lo : -1;
}

int pr_cpulist_has(const int *cpus, size_t n, int cpu)
{
	return pr_cpulist_find(cpus, n, cpu) >= 0;
}
