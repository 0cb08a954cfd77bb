/* SPDX-License-Identifier: MIT */
#include "read/window.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>

int pr_window_init(struct pr_window *w, uint32_t n)
{
	*w = (struct pr_window){ .limit = UINT64_MAX };
	w->ring = pr_calloc(n ? n : 1, sizeof(*w->ring));
	return w->ring ? 0 : -ENOMEM;
}

void pr_window_free(struct pr_window *w)
{
	free(w->ring);
	w->ring = NULL;
}

void pr_window_begin(struct pr_window *w, const struct pr_cpu *cpu, uint32_t n,
		     uint64_t newest)
{
	uint32_t i;

	w->newest = newest;
	for (i = 0; i < n; i++) {
		w->ring[i].tail = cpu[i].ring.tail;
		w->ring[i].late = cpu[i].st.late;
	}
}

void pr_window_end(struct pr_window *w, const struct pr_cpu *cpu, uint32_t n, uint64_t limit)
{
	/* Each ring's late records lead its part of a pass (a ring is in time
	 * order): all of them arrived since the last snapshot if the ring's
	 * first record of this pass did. */
	bool bounded = w->limit != UINT64_MAX && w->newest <= w->limit;
	uint64_t after = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bounded && w->ring[i].tail >= w->ring[i].head)
			after += cpu[i].st.late - w->ring[i].late;
		w->ring[i].head = cpu[i].ring.head;
	}
	if (after)
		__atomic_store_n(&w->after, w->after + after, __ATOMIC_RELAXED);
	if (limit != UINT64_MAX)
		__atomic_store_n(&w->passes, w->passes + 1, __ATOMIC_RELAXED);
	w->limit = limit;
}
