/* SPDX-License-Identifier: MIT */
/* A timed BPF ring buffer as a leaf of the merge (read/merge.c). Its
 * records come in reservation order, which is not time order when several
 * CPUs write it, so with an order window a pass copies every record it
 * finds into a buffer of its own, kept sorted by time, and the leaf's key is
 * that buffer's oldest: the ring buffer's records then come out in time
 * order with the perf rings' within the window too. Without a window (and
 * nothing kept) the leaf is the ring's next record, in reservation order.
 * Knows ring buffers and the registry, not the session. */
#ifndef PR_READ_RBKEEP_H
#define PR_READ_RBKEEP_H

#include "read/ringbuf.h"

#include <stdbool.h>
#include <stdint.h>

struct pr_kept_rec {
	uint64_t time;
	uint32_t off, len;          /* in bytes[] */
};

/* Copies of one ring buffer's records, sorted by time (equal times in the
 * order found); [head, n) are live. At most max bytes (the ring's size):
 * beyond that the rest waits in the ring for a later pass. */
struct pr_kept {
	struct pr_kept_rec *rec;
	uint32_t head, n, cap;
	uint8_t *bytes;
	uint64_t used, size, max;
};

/* One leaf: the ring buffer and what its window keeps. */
struct pr_rbleaf {
	struct pr_rbuf *rb;
	struct pr_kept kept;
	bool copying;               /* this pass reads from kept */
};

void pr_kept_free(struct pr_kept *k);

/* Adds a copy of rec; 0, or -ENOSPC (max reached) or -ENOMEM: not added. */
int pr_kept_add(struct pr_kept *k, uint64_t time, const void *rec, uint32_t len);

static inline bool pr_kept_empty(const struct pr_kept *k)
{
	return k->head == k->n;
}

/* At a pass's start (rb claimed): window set, or records kept from before,
 * makes the pass copy (every record in the ring is moved into kept).
 * Returns the leaf's key and whether it has a record. */
bool pr_rbleaf_begin(struct pr_rbleaf *l, bool window, uint64_t *key);

/* The leaf's record to its callback, then its next key (*live false: none).
 * *stop: the callback asked. Returns 1 (a sample went) or 0. */
int pr_rbleaf_step(struct pr_rbleaf *l, uint64_t *key, bool *live, bool *stop);

/* The pass's end over it: commit and recheck; records that arrived meanwhile
 * are copied too when copying (a few times at most). true: records wait
 * that no wakeup will announce (the reader must pass again soon). */
bool pr_rbleaf_end(struct pr_rbleaf *l);

#endif
