/* SPDX-License-Identifier: MIT */
/* The profiler's session-level calls: which event owns an id. */
#include "session.h"

PERFRING_API struct perfring_event *perfring_session_event_of_id(const struct perfring_session *s,
								 int cpu, uint64_t id)
{
	const struct pr_idmap *m;
	int i;

	if (!s || (i = pr_cpu_index(s, cpu)) < 0)
		return NULL;
	m = pr_cpu_find_id(&s->cpu[i], id);
	return m ? m->ev : NULL;
}
