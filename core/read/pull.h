/* SPDX-License-Identifier: MIT */
/* The batch pull: one ring's records into the caller's items. */
#ifndef PR_READ_PULL_H
#define PR_READ_PULL_H

#include "read/cpu.h"

/* Inside c's pull batch (held by this thread): fills up to max items with
 * the next decoded records, as perfring_cpu_pull() documents, beginning the
 * batch if it is not (c->pulling) and reading the head again once when the
 * snapshot runs out. Returns how many; fewer than max only when the ring was
 * empty, or before a wrapped record that no longer fits the scratch. With
 * zeroed, a sample's fields up to record that its event lacks are zero;
 * without, they may be left as the item held them. */
size_t pr_pull_batch(struct pr_cpu *c, struct perfring_item *items, size_t max, bool zeroed);

#endif
