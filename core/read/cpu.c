/* SPDX-License-Identifier: MIT */
/* A watched CPU's id table and its reset. */
#include "read/cpu.h"

#include <stdlib.h>
#include <string.h>

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct pr_idmap *)a)->id, y = ((const struct pr_idmap *)b)->id;

	return (x > y) - (x < y);
}

void pr_cpu_ids_ready(struct pr_cpu *c)
{
	qsort(c->ids, c->nids, sizeof(*c->ids), cmp_id);
	c->last = c->nids ? c->ids[0] : (struct pr_idmap){ 0, NULL };
}

const struct pr_idmap *pr_cpu_find_id(const struct pr_cpu *c, uint64_t id)
{
	struct pr_idmap key = { id, NULL };

	return c->nids ? bsearch(&key, c->ids, c->nids, sizeof(*c->ids), cmp_id) : NULL;
}

void pr_cpu_rewind(struct pr_cpu *c)
{
	pr_ring_init(&c->ring, c->ring.meta, c->ring.data, c->ring.size, c->ring.scratch);
	memset(&c->st, 0, sizeof(c->st));
	memset(&c->lost, 0, sizeof(c->lost));
	c->pulling = false;
	c->ended = false;
}

#define LOAD(f) (out->f = __atomic_load_n(&c->st.f, __ATOMIC_RELAXED))

void pr_cpu_stats_read(const struct pr_cpu *c, struct perfring_cpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	LOAD(records);
	LOAD(bytes);
	LOAD(lost);
	LOAD(corrupt);
	LOAD(wakeups);
	LOAD(max_fill_pct);
	LOAD(hup);
	LOAD(samples);
	LOAD(late);
	LOAD(unknown);
	LOAD(flushes);
	LOAD(overwritten);
}
