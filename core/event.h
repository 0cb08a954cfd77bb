/* SPDX-License-Identifier: MIT */
/* The event registry: what each added event is, and its callback. */
#ifndef PR_EVENT_H
#define PR_EVENT_H

#include "record.h"
#include "tracefs.h"

#include <perfring/perfring.h>

enum pr_ev_kind { PR_EV_TRACEPOINT, PR_EV_SOFTWARE, PR_EV_ATTR };

struct perfring_event {
	struct perfring_session *s;
	enum pr_ev_kind kind;
	struct perf_event_attr attr;
	struct pr_layout layout;   /* of attr.sample_type, for the decoder */
	char name[160];
	perfring_sample_fn fn;
	void *ctx;
	char *filter;
	struct pr_tp_format fmt; /* tracepoints only */
};

/* Hands smp to ev's callback, if it has one. true: the callback asked to
 * stop. fn is read at each call: a callback may replace its own. */
static inline bool pr_event_call(const struct perfring_event *ev,
				 const struct perfring_sample *smp)
{
	perfring_sample_fn fn = ev->fn;

	return fn && fn(smp, ev->ctx);
}

/* Forces what every event needs to share a ring and be timed (see add_attr). */
void pr_event_force_attr(struct perf_event_attr *a);

void pr_event_free(struct perfring_event *ev);

#endif
