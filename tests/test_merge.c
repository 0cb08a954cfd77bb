/* SPDX-License-Identifier: MIT */
/* The loser tree behind the time merge: order, ties, the runner-up, and
 * leaves running dry, checked against a brute-force minimum. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "read/tree.h"

#define MAXK 67

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* K sorted streams, as many rings hold: stream i has len[i] keys. */
struct streams {
	uint32_t k, len[MAXK], pos[MAXK];
	uint64_t key[MAXK][64];
};

static void make_streams(struct streams *st, uint32_t k, uint64_t seed, uint64_t spread)
{
	uint32_t i, j;

	st->k = k;
	for (i = 0; i < k; i++) {
		uint64_t t = next_rand(&seed) % spread;

		st->len[i] = (uint32_t)(next_rand(&seed) % 64);
		st->pos[i] = 0;
		for (j = 0; j < st->len[i]; j++) {
			t += next_rand(&seed) % spread; /* 0 too: equal keys in a stream */
			st->key[i][j] = t;
		}
	}
}

static bool live(const struct streams *st, uint32_t i)
{
	return st->pos[i] < st->len[i];
}

static uint64_t head(const struct streams *st, uint32_t i)
{
	return live(st, i) ? st->key[i][st->pos[i]] : 0;
}

/* The smallest (key, index) over live streams, skipping one; k if none. */
static uint32_t brute_min(const struct streams *st, uint32_t skip)
{
	uint32_t i, best = st->k;

	for (i = 0; i < st->k; i++)
		if (i != skip && live(st, i) &&
		    (best == st->k || head(st, i) < head(st, best)))
			best = i;
	return best;
}

static void merge_and_check(uint32_t k, uint64_t seed, uint64_t spread)
{
	struct streams st;
	struct pr_tree t;
	const struct pr_tree_ent *w;
	struct pr_tree_ent second;
	uint32_t i, want, runner, total = 0, out = 0;

	make_streams(&st, k, seed, spread);
	cr_assert_eq(pr_tree_init(&t, k), 0);
	for (i = 0; i < k; i++) {
		pr_tree_set(&t, i, head(&st, i), live(&st, i));
		total += st.len[i];
	}
	pr_tree_build(&t);
	while ((w = pr_tree_winner(&t))) {
		want = brute_min(&st, k);
		cr_assert_eq(w->idx, want, "k=%u seed=%llu: winner %u, brute force %u", k,
			     (unsigned long long)seed, w->idx, want);
		cr_assert_eq(w->key, head(&st, want));
		runner = brute_min(&st, want);
		second = pr_tree_second(&t);
		if (runner == k) {
			cr_assert_geq(second.idx, PR_TREE_DONE, "no runner-up left");
		} else {
			cr_assert_eq(second.idx, runner, "k=%u: runner-up %u, brute force %u", k,
				     second.idx, runner);
			cr_assert_eq(second.key, head(&st, runner));
		}
		st.pos[want]++;
		out++;
		pr_tree_update(&t, want, head(&st, want), live(&st, want));
	}
	cr_assert_eq(out, total);
	cr_assert_null(pr_tree_winner(&t));
	pr_tree_free(&t);
}

Test(merge, every_k_matches_brute_force)
{
	uint32_t k;
	uint64_t seed;

	for (k = 1; k <= MAXK; k += (k < 9 ? 1 : 7))
		for (seed = 1; seed <= 4; seed++) {
			merge_and_check(k, seed * 977 + k, 1000); /* few ties */
			merge_and_check(k, seed * 131 + k, 3);    /* many ties */
		}
}

Test(merge, ties_come_out_by_index)
{
	struct pr_tree t;
	const struct pr_tree_ent *w;
	uint32_t i;

	cr_assert_eq(pr_tree_init(&t, 7), 0);
	for (i = 0; i < 7; i++)
		pr_tree_set(&t, i, 42, true);
	pr_tree_build(&t);
	for (i = 0; i < 7; i++) {
		w = pr_tree_winner(&t);
		cr_assert_not_null(w);
		cr_assert_eq(w->idx, i);
		pr_tree_update(&t, i, 0, false);
	}
	cr_assert_null(pr_tree_winner(&t));
	pr_tree_free(&t);
}

/* A live key of UINT64_MAX (hostile memory can say anything) still sorts
 * before every leaf that has run dry. */
Test(merge, largest_key_beats_empty_leaves)
{
	struct pr_tree t;

	cr_assert_eq(pr_tree_init(&t, 4), 0);
	pr_tree_set(&t, 0, 0, false);
	pr_tree_set(&t, 1, 0, false);
	pr_tree_set(&t, 2, 0, false);
	pr_tree_set(&t, 3, UINT64_MAX, true);
	pr_tree_build(&t);
	cr_assert_not_null(pr_tree_winner(&t));
	cr_assert_eq(pr_tree_winner(&t)->idx, 3);
	cr_assert_geq(pr_tree_second(&t).idx, PR_TREE_DONE);
	pr_tree_update(&t, 3, 0, false);
	cr_assert_null(pr_tree_winner(&t));
	pr_tree_free(&t);
}

Test(merge, empty_and_single)
{
	struct pr_tree t;

	cr_assert_eq(pr_tree_init(&t, 1), 0);
	pr_tree_set(&t, 0, 0, false);
	pr_tree_build(&t);
	cr_assert_null(pr_tree_winner(&t));
	pr_tree_update(&t, 0, 5, true);
	cr_assert_eq(pr_tree_winner(&t)->key, 5);
	cr_assert_geq(pr_tree_second(&t).idx, PR_TREE_DONE);
	pr_tree_free(&t);
	pr_tree_free(&t); /* idempotent */
}
