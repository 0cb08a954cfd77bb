/* SPDX-License-Identifier: MIT */
/* Min-heap of (key, index) for the k-way time merge. Knows keys, not rings. */
#ifndef PR_MERGE_H
#define PR_MERGE_H

#include <stddef.h>
#include <stdint.h>

struct pr_heap_ent { uint64_t key; uint32_t idx; };
struct pr_heap { struct pr_heap_ent *e; uint32_t n, cap; };

int  pr_heap_init(struct pr_heap *h, uint32_t cap);
void pr_heap_free(struct pr_heap *h);
void pr_heap_push(struct pr_heap *h, uint64_t key, uint32_t idx); /* n < cap */
void pr_heap_pop(struct pr_heap *h);
/* Sets the top's key and restores order: O(1) when it is still the smallest. */
void pr_heap_replace_top(struct pr_heap *h, uint64_t key);
static inline const struct pr_heap_ent *pr_heap_top(const struct pr_heap *h)
{
	return h->n ? &h->e[0] : NULL;
}

#endif
