/* SPDX-License-Identifier: MIT */
/* The public parse calls: one CPU (push, pull or batch pull), or all CPUs in time order. */
#include "session.h"
#include "snapshot.h"
#include "read/deliver.h"
#include "read/drain.h"
#include "read/merge.h"
#include "read/pull.h"

#include <errno.h>
#include <limits.h>

/* The CPU of a per-CPU call, or the sentence why not. Inline, with the
 * checks that fail out of line: cpu_next pays it for every record. */
static inline int started_cpu(struct perfring_session *s, int cpu, struct pr_cpu **c)
{
	int i;

	if (!s)
		return pr_null(NULL, "parse_for_cpu", "s");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "parse before perfring_session_start");
	if (s->o.overwrite)
		return pr_overwrite_refuse(s, "parse_for_cpu, cpu_next, cpu_pull and cpu_commit");
	i = pr_cpu_index(s, cpu);
	if (i < 0)
		return pr_err(&s->err, -ENOENT, "CPU %d is not watched by this session", cpu);
	*c = &s->cpu[i];
	return 0;
}

/* A parse's end (R7, docs/RULES.md): -ECANCELED when the session was
 * freed inside it. */
static int leave(struct perfring_session *s, int n)
{
	return pr_session_leave(s) ? -ECANCELED : n;
}

static int busy(struct perfring_session *s, int cpu)
{
	return pr_err(&s->err, -EBUSY, "CPU %d's ring is being parsed already (by a callback of "
		      "that parse, or by another thread): one parse of a ring at a time", cpu);
}

PERFRING_API int perfring_session_parse_for_cpu_n(struct perfring_session *s, int cpu,
						  uint32_t max, bool *more)
{
	struct pr_cpu *c = NULL;
	int err = started_cpu(s, cpu, &c), n;

	if (err)
		return err;
	pr_session_enter(s);
	n = pr_drain(c, max, more, NULL);
	if (n == -EBUSY)
		busy(s, cpu);
	return leave(s, n);
}

PERFRING_API int perfring_session_parse_for_cpu(struct perfring_session *s, int cpu)
{
	return perfring_session_parse_for_cpu_n(s, cpu, 0, NULL);
}

/* The pull batch ends: the space goes back to the kernel, the ring to
 * whoever parses it next. */
static void end_pull(struct pr_cpu *c)
{
	pr_end(c);
	pr_cpu_unclaim(c);
}

/* The next record of c's pull batch, begun by this thread. At the end of
 * the snapshot the head is read again, so records written since are seen
 * without a commit; an empty ring with nothing returned ends the batch. */
static int pull_next(struct pr_cpu *c, struct perfring_sample *smp, struct perfring_record *rec)
{
	int k = pr_pull(c, smp, rec);

	if (k)
		return k;
	pr_begin(c);
	c->pulling = true;
	if ((k = pr_pull(c, smp, rec)) == 0 && c->ring.tail == c->ring.meta->data_tail)
		end_pull(c);
	return k;
}

PERFRING_API int perfring_cpu_next(struct perfring_session *s, int cpu,
				   struct perfring_sample *sample, struct perfring_record *rec)
{
	struct pr_cpu *c = NULL;
	uintptr_t me = pr_self();
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	if (!sample || !rec)
		return pr_null(&s->err, __func__, sample ? "rec" : "sample");
	if (!pr_claim_pull(c, me))
		return busy(s, cpu);
	pr_session_enter(s);
	if (!c->pulling) {
		pr_begin(c);
		c->pulling = true;
	}
	return leave(s, pull_next(c, sample, rec));
}

PERFRING_API int perfring_cpu_commit(struct perfring_session *s, int cpu)
{
	struct pr_cpu *c = NULL;
	uintptr_t me = pr_self();
	int err = started_cpu(s, cpu, &c);

	if (err)
		return err;
	if (!pr_claim_pull(c, me))
		return busy(s, cpu);
	end_pull(c);
	return 0;
}

/* opts' flags, or the sentence why not. */
static int pull_flags(struct perfring_session *s, const struct perfring_pull_opts *in,
		      uint32_t *flags)
{
	struct perfring_pull_opts o;
	int err;

	*flags = 0;
	if (!in) /* perfring_cpu_pull's every call */
		return 0;
	if ((err = pr_opts_copy(&s->err, "perfring_pull_opts", &o, sizeof(o), sizeof(o), in)))
		return err;
	if (o.flags & ~PERFRING_PULL_PRESENT_ONLY)
		return pr_err(&s->err, -EINVAL, "perfring_pull_opts.flags = %#x: only "
			      "PERFRING_PULL_PRESENT_ONLY is defined", o.flags);
	*flags = o.flags;
	return 0;
}

PERFRING_API int perfring_cpu_pull_opts(struct perfring_session *s, int cpu,
					struct perfring_item *items, size_t max,
					const struct perfring_pull_opts *opts)
{
	struct pr_cpu *c = NULL;
	uintptr_t me = pr_self();
	uint32_t flags;
	int err = started_cpu(s, cpu, &c);
	size_t n;

	if (err || (err = pull_flags(s, opts, &flags)))
		return err;
	if (!items)
		return pr_null(&s->err, __func__, "items");
	if (!max)
		return pr_err(&s->err, -EINVAL, "perfring_cpu_pull: max is 0; give room for "
			      "at least one item");
	if (!pr_claim_pull(c, me))
		return busy(s, cpu);
	pr_session_enter(s);
	n = pr_pull_batch(c, items, max < INT_MAX ? max : INT_MAX,
			  !(flags & PERFRING_PULL_PRESENT_ONLY));
	/* Empty: what was returned before is no longer valid (it was valid
	 * until this pull), so the batch ends, committed, whatever a loop
	 * that stops here does next. */
	if (!n)
		end_pull(c);
	return leave(s, (int)n);
}

PERFRING_API int perfring_cpu_pull(struct perfring_session *s, int cpu,
				   struct perfring_item *items, size_t max)
{
	return perfring_cpu_pull_opts(s, cpu, items, max, NULL);
}

PERFRING_API int perfring_session_parse_all(struct perfring_session *s)
{
	struct pr_pass p = { 0 };
	int n, k;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "parse before perfring_session_start");
	if ((n = pr_overwrite_refuse(s, __func__)))
		return n;
	pr_session_enter(s);
	k = pr_session_tick(s);
	/* After stop nothing younger can come: what the window kept goes now. */
	p.window = s->state == PR_STOPPED ? 0 : s->o.order_window_ns;
	n = pr_merge_pass(s->merge, &p);
	if (n == -EBUSY)
		pr_session_busy(s);
	return leave(s, n < 0 ? n : n + (k > 0 ? k : 0));
}
