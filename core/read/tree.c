/* SPDX-License-Identifier: MIT */
/* The loser tree over (time, ring index) keys: which ring holds the oldest head. */
#include "read/tree.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>

int pr_tree_init(struct pr_tree *t, uint32_t n)
{
	uint32_t cap = 1, i;

	while (cap < n)
		cap <<= 1;
	t->n = n;
	t->cap = cap;
	t->node = pr_calloc(cap, sizeof(*t->node));
	t->tmp = pr_calloc(2 * (size_t)cap, sizeof(*t->tmp));
	if (!t->node || !t->tmp) {
		pr_tree_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++) /* the padding leaves never get a record */
		pr_tree_set(t, i, 0, false);
	return 0;
}

void pr_tree_free(struct pr_tree *t)
{
	free(t->node);
	free(t->tmp);
	t->node = t->tmp = NULL;
	t->n = t->cap = 0;
}

void pr_tree_build(struct pr_tree *t)
{
	struct pr_tree_ent a, b;
	uint32_t m;

	for (m = t->cap - 1; m; m--) {
		a = t->tmp[2 * m];
		b = t->tmp[2 * m + 1];
		t->tmp[m] = pr_tree_less(a, b) ? a : b;
		t->node[m] = pr_tree_less(a, b) ? b : a;
	}
	t->node[0] = t->tmp[1];
}

struct pr_tree_ent pr_tree_second(const struct pr_tree *t)
{
	struct pr_tree_ent best = { UINT64_MAX, UINT32_MAX };
	uint32_t leaf = t->node[0].idx & (PR_TREE_DONE - 1), n;

	for (n = (t->cap + leaf) >> 1; n; n >>= 1)
		if (pr_tree_less(t->node[n], best))
			best = t->node[n];
	return best;
}
