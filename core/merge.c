/* SPDX-License-Identifier: MIT */
#include "merge.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>

int pr_heap_init(struct pr_heap *h, uint32_t cap)
{
	h->n = 0;
	h->cap = cap;
	h->e = cap ? pr_calloc(cap, sizeof(*h->e)) : NULL;
	return cap && !h->e ? -ENOMEM : 0;
}

void pr_heap_free(struct pr_heap *h)
{
	free(h->e);
	h->e = NULL;
	h->n = h->cap = 0;
}

/* Ties go to the lower index, so equal timestamps come out in CPU order. */
static inline int less(const struct pr_heap_ent *a, const struct pr_heap_ent *b)
{
	return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

static void sift_down(struct pr_heap *h, uint32_t i)
{
	struct pr_heap_ent x = h->e[i];
	uint32_t c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && less(&h->e[c + 1], &h->e[c]))
			c++;
		if (!less(&h->e[c], &x))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	h->e[i] = x;
}

void pr_heap_push(struct pr_heap *h, uint64_t key, uint32_t idx)
{
	struct pr_heap_ent x = { key, idx };
	uint32_t i = h->n++, p;

	while (i > 0) {
		p = (i - 1) / 2;
		if (!less(&x, &h->e[p]))
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = x;
}

void pr_heap_pop(struct pr_heap *h)
{
	if (!h->n)
		return;
	h->e[0] = h->e[--h->n];
	if (h->n)
		sift_down(h, 0);
}

void pr_heap_replace_top(struct pr_heap *h, uint64_t key)
{
	h->e[0].key = key;
	sift_down(h, 0);
}
