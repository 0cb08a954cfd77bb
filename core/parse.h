/* SPDX-License-Identifier: MIT */
/* The parse loops: one ring (drain.c), every ring in time order (merged.c). */
#ifndef PR_PARSE_H
#define PR_PARSE_H

#include "session.h"

/* Drains one ring: at most max records (0 = all), stopping early when a
 * callback returns non-zero or *cancel becomes true (may be NULL). *more:
 * records remain. Returns samples handled. */
int pr_parse_ring(struct perfring_session *s, struct pr_cpu *c, uint32_t max, bool *more,
		  const volatile bool *cancel);

/* The merge's tree and per-ring cursors, for s->ncpu rings (s->cpu set). */
int pr_merge_init(struct perfring_session *s);
void pr_merge_free(struct perfring_session *s);

/* Time-ordered drain of every ring up to one snapshot of their heads.
 * *stopped: a callback asked to stop. Returns samples handled. */
int pr_parse_merged(struct perfring_session *s, bool *stopped);

#endif
