/* SPDX-License-Identifier: MIT */
/* The public parse calls: one CPU (push or pull), or all CPUs in time order. */
#include "session.h"
#include "read/deliver.h"
#include "read/drain.h"
#include "read/merge.h"

#include <errno.h>

static int started_cpu(struct perfring_session *s, int cpu, struct pr_cpu **c)
{
	int i;

	if (!s)
		return pr_null(NULL, "parse_for_cpu", "s");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "parse before perfring_session_start");
	i = pr_cpu_index(s, cpu);
	if (i < 0)
		return pr_err(&s->err, -ENOENT, "CPU %d is not watched by this session", cpu);
	*c = &s->cpu[i];
	return 0;
}

PERFRING_API int perfring_session_parse_for_cpu_n(struct perfring_session *s, int cpu,
						  uint32_t max, bool *more)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	return pr_drain(c, max, more, NULL);
}

PERFRING_API int perfring_session_parse_for_cpu(struct perfring_session *s, int cpu)
{
	return perfring_session_parse_for_cpu_n(s, cpu, 0, NULL);
}

PERFRING_API int perfring_cpu_next(struct perfring_session *s, int cpu,
				   struct perfring_sample *sample, struct perfring_record *rec)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	if (!sample || !rec)
		return pr_null(&s->err, __func__, sample ? "rec" : "sample");
	if (!c->pulling) {
		pr_begin(c);
		c->pulling = true;
	}
	return pr_pull(c, sample, rec);
}

PERFRING_API int perfring_cpu_commit(struct perfring_session *s, int cpu)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	pr_end(c);
	return 0;
}

PERFRING_API int perfring_session_parse_all(struct perfring_session *s)
{
	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "parse before perfring_session_start");
	return pr_merge_parse(s->merge, NULL);
}
