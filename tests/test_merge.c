/* The k-way merge heap: order, ties, and replace-top. */
#include "merge.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

Test(merge, pops_in_key_order)
{
	struct pr_heap h;
	uint64_t seed = 42, prev = 0;

	cr_assert_eq(pr_heap_init(&h, 1000), 0);
	for (uint32_t i = 0; i < 1000; i++)
		pr_heap_push(&h, next_rand(&seed) % 5000, i);
	for (int i = 0; i < 1000; i++) {
		const struct pr_heap_ent *t = pr_heap_top(&h);

		cr_assert_not_null(t);
		cr_assert_geq(t->key, prev);
		prev = t->key;
		pr_heap_pop(&h);
	}
	cr_assert_null(pr_heap_top(&h));
	pr_heap_free(&h);
}

Test(merge, ties_come_out_by_index)
{
	struct pr_heap h;

	cr_assert_eq(pr_heap_init(&h, 8), 0);
	for (uint32_t i = 8; i-- > 0;)
		pr_heap_push(&h, 7, i);
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(pr_heap_top(&h)->idx, i);
		pr_heap_pop(&h);
	}
	pr_heap_free(&h);
}

/* Simulates K sorted streams merged with replace_top, as the parser does. */
Test(merge, replace_top_merges_sorted_streams)
{
	enum { K = 37, PER = 300 };
	uint64_t next[K], seed = 7, prev = 0, got = 0;
	uint32_t left[K];
	struct pr_heap h;

	cr_assert_eq(pr_heap_init(&h, K), 0);
	for (uint32_t i = 0; i < K; i++) {
		next[i] = next_rand(&seed) % 100;
		left[i] = PER;
		pr_heap_push(&h, next[i], i);
	}
	while (pr_heap_top(&h)) {
		uint32_t i = pr_heap_top(&h)->idx;

		cr_assert_geq(pr_heap_top(&h)->key, prev);
		prev = pr_heap_top(&h)->key;
		got++;
		if (--left[i]) {
			next[i] += next_rand(&seed) % 50;
			pr_heap_replace_top(&h, next[i]);
		} else {
			pr_heap_pop(&h);
		}
	}
	cr_assert_eq(got, (uint64_t)K * PER);
	pr_heap_free(&h);
}

Test(merge, empty_and_single)
{
	struct pr_heap h;

	cr_assert_eq(pr_heap_init(&h, 1), 0);
	pr_heap_pop(&h);
	cr_assert_null(pr_heap_top(&h));
	pr_heap_push(&h, 5, 0);
	pr_heap_replace_top(&h, 9);
	cr_assert_eq(pr_heap_top(&h)->key, 9);
	pr_heap_free(&h);
	cr_assert_eq(pr_heap_init(&h, 0), 0);
	pr_heap_free(&h);
}
