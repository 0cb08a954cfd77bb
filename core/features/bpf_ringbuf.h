/* SPDX-License-Identifier: MIT */
/* The session's BPF ring buffers (features/bpf_ringbuf.c), as the reactor's
 * slots (loop/ringbuf.c) see them: one reader each, in the order added. */
#ifndef PR_FEATURES_BPF_RINGBUF_H
#define PR_FEATURES_BPF_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>

struct perfring_session;
struct pr_rbuf;

/* The ring buffers s reads (0 before any was added). */
size_t pr_ringbuf_count(const struct perfring_session *s);

/* The k-th of them (k < pr_ringbuf_count). */
struct pr_rbuf *pr_ringbuf_at(const struct perfring_session *s, size_t k);

/* Whether s's merge drains rb (a timed ring buffer, given to the merge at
 * start): the feature's tick and an ordered reactor's slot then leave it to
 * the merged passes; an unordered reactor's slot drains it itself. */
bool pr_ringbuf_merged(const struct perfring_session *s, const struct pr_rbuf *rb);

/* The sentence for a drain of rb that failed (-EBUSY, R1; -EIO, a corrupt
 * ring), in s's buffer; returns err. */
int pr_ringbuf_error(struct perfring_session *s, const struct pr_rbuf *rb, int err);

#endif
