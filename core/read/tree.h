/* SPDX-License-Identifier: MIT */
/* Loser tree of (key, idx) for the k-way time merge. Knows keys, not rings. */
#ifndef PR_READ_TREE_H
#define PR_READ_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Order: key, then idx, so equal timestamps come out in CPU order. A leaf
 * with no record has idx PR_TREE_DONE + leaf and sorts after every live one. */
struct pr_tree_ent { uint64_t key; uint32_t idx; };

#define PR_TREE_DONE 0x80000000u

struct pr_tree {
	struct pr_tree_ent *node; /* [0]: the winner; [1, cap): each game's loser */
	struct pr_tree_ent *tmp;  /* 2 * cap: [cap + i] leaf i, [m] game m's winner */
	uint32_t n, cap;          /* leaves used; leaves, a power of two */
};

int  pr_tree_init(struct pr_tree *t, uint32_t n);
void pr_tree_free(struct pr_tree *t);

/* Bitwise, not short-circuit: the replay below compiles to conditional
 * moves, since under fine interleaving each game's outcome is a coin toss. */
static inline bool pr_tree_less(struct pr_tree_ent a, struct pr_tree_ent b)
{
	return (a.key < b.key) | ((a.key == b.key) & (a.idx < b.idx));
}

static inline struct pr_tree_ent pr_tree_leaf(uint32_t i, uint64_t key, bool live)
{
	return (struct pr_tree_ent){ live ? key : UINT64_MAX, live ? i : PR_TREE_DONE + i };
}

/* Leaf i's head before pr_tree_build; live false: no record (key ignored). */
static inline void pr_tree_set(struct pr_tree *t, uint32_t i, uint64_t key, bool live)
{
	t->tmp[t->cap + i] = pr_tree_leaf(i, key, live);
}

/* Plays every game between the leaves pr_tree_set gave. */
void pr_tree_build(struct pr_tree *t);

/* Leaf i has a new head (live) or none: replays its path to the root.
 * Inline: it is the per-record step of a merge. */
static inline void pr_tree_update(struct pr_tree *t, uint32_t i, uint64_t key, bool live)
{
	struct pr_tree_ent cur = pr_tree_leaf(i, key, live), x;
	uint32_t n;
	bool lt;

	for (n = (t->cap + i) >> 1; n; n >>= 1) {
		x = t->node[n];
		lt = pr_tree_less(x, cur);
		t->node[n] = lt ? cur : x;
		cur = lt ? x : cur;
	}
	t->node[0] = cur;
}

static inline const struct pr_tree_ent *pr_tree_winner(const struct pr_tree *t)
{
	return t->node[0].idx < PR_TREE_DONE ? &t->node[0] : NULL;
}

/* The smallest entry but the winner: the best loser on the winner's path. */
struct pr_tree_ent pr_tree_second(const struct pr_tree *t);

#endif
