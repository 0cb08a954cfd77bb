/* SPDX-License-Identifier: MIT */
/* The session's public lifecycle (new, start, stop) and the calls that add
 * events to its registry. Features are reached through their rows only. */
#include "session.h"
#include "feature.h"
#include "opts.h"
#include "rings/lost.h"
#include "base/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* struct perfring_opts as 0.1 published it: up to flush_ms. */
#define PR_OPTS_V01_SZ offsetof(struct perfring_opts, enable_on_exec)

static void features_fini(struct perfring_session *s)
{
	PR_EACH_FEATURE(s, f)
		if ((*f)->fini)
			(*f)->fini(s);
}

static int features_init(struct perfring_session *s)
{
	int err;

	PR_EACH_FEATURE(s, f)
		if ((*f)->init && (err = (*f)->init(s)))
			return err;
	return 0;
}

PERFRING_API int perfring_session_new(const struct perfring_opts *opts,
				      struct perfring_session **out)
{
	struct perfring_session *s;
	int err;

	if (!out)
		return pr_null(NULL, __func__, "out");
	*out = NULL;
	s = pr_calloc(1, sizeof(*s));
	if (!s)
		return pr_err(NULL, -ENOMEM, "out of memory allocating a session");
	if (!opts)
		s->o.sz = sizeof(s->o);
	s->page_size = (size_t)sysconf(_SC_PAGESIZE);
	s->features = pr_features;
	s->cgroup_fd = -1;
	if ((err = pr_opts_copy(NULL, "perfring_opts", &s->o, sizeof(s->o), PR_OPTS_V01_SZ, opts)) ||
	    (err = pr_opts_check(&s->o, s->page_size, &s->data_size)) ||
	    (err = pr_opts_cpus(&s->o, &s->cpus, &s->ncpu)) || (err = features_init(s))) {
		features_fini(s);
		free(s->cpus);
		free(s);
		return err;
	}
	s->o.cpus = NULL;
	s->o.cpu_cnt = s->ncpu;
	s->reg.err = &s->err;
	s->pidfd = -1;
	*out = s;
	return 0;
}

static int features_check(struct perfring_session *s)
{
	int err;

	PR_EACH_FEATURE(s, f)
		if ((*f)->check && (err = (*f)->check(s)))
			return err;
	return 0;
}

/* A feature may open the rings its own way (hotplug: the online CPUs). */
static int open_cpus(struct perfring_session *s, struct pr_cpu *cpu, const struct pr_plan *p)
{
	int err;

	PR_EACH_FEATURE(s, f)
		if ((*f)->open && (err = (*f)->open(s, cpu, p)) != PR_FEATURE_PASS)
			return err;
	return pr_open_cpus(p, cpu, s->ncpu, &s->err);
}

static void features_unmap(struct perfring_session *s)
{
	PR_EACH_FEATURE(s, f)
		if ((*f)->unmap)
			(*f)->unmap(s);
}

/* Each feature's started hook, then (with enable_on_exec) each one's
 * exec_enable; a failure undoes every feature's work on the rings. */
static int features_started(struct perfring_session *s)
{
	int err = 0;

	PR_EACH_FEATURE(s, f)
		if ((*f)->started && (err = (*f)->started(s)))
			break;
	if (!err && s->o.enable_on_exec)
		PR_EACH_FEATURE(s, f)
			if ((*f)->exec_enable && (err = (*f)->exec_enable(s)))
				break;
	return err;
}

static int open_rings(struct perfring_session *s)
{
	struct pr_cpu *cpu = pr_calloc(s->ncpu ? s->ncpu : 1, sizeof(*cpu));
	struct pr_plan p;
	size_t i;
	int err;

	if (!cpu)
		return pr_err(&s->err, -ENOMEM, "out of memory for %zu CPUs", s->ncpu);
	for (i = 0; i < s->ncpu; i++)
		cpu[i].cpu = s->cpus[i];
	pr_session_plan(s, &p);
	if ((err = open_cpus(s, cpu, &p))) {
		free(cpu);
		return err;
	}
	/* With enable_on_exec the kernel enables them at the process's execve. */
	if ((err = pr_session_rings(s, cpu)) || (err = features_started(s)) ||
	    (!s->o.enable_on_exec && (err = pr_enable_cpus(s->cpu, s->ncpu, true, &s->err)))) {
		features_unmap(s);
		pr_session_close_rings(s);
	}
	return err;
}

/* After a stop: the same events, rings and stats, enabled again (R11). A
 * failure leaves every event disabled, the session stopped. */
static int restart(struct perfring_session *s)
{
	struct pr_errbuf undo = { .busy = 0 };
	int err = pr_enable_cpus(s->cpu, s->ncpu, true, &s->err);

	if (err) {
		pr_enable_cpus(s->cpu, s->ncpu, false, &undo);
		return err;
	}
	s->state = PR_STARTED;
	return 0;
}

PERFRING_API int perfring_session_start(struct perfring_session *s)
{
	int err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state == PR_STARTED)
		return pr_err(&s->err, -EBUSY, "perfring_session_start: already started");
	if (s->state == PR_STOPPED)
		return restart(s);
	if (!s->reg.nevents && !s->reg.nsources && !s->reg.sink.fn)
		return pr_err(&s->err, -EINVAL, "perfring_session_start: no events or ring buffers "
			      "added and no record callback set");
	if ((err = features_check(s)) || (err = open_rings(s)))
		return err;
	/* R2: the end of a pid-mode session is the process's, which a pidfd
	 * tells; without one (an old kernel) kill(2) and /proc do. */
	if (s->o.pid > 0 && s->pidfd < 0)
		s->pidfd = pr_pidfd_open(s->o.pid);
	s->reg.frozen = true;
	s->state = PR_STARTED;
	return 0;
}

PERFRING_API int perfring_session_stop(struct perfring_session *s)
{
	int err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state != PR_STARTED)
		return pr_err(&s->err, -EINVAL, "perfring_session_stop: the session is not running");
	if ((err = pr_enable_cpus(s->cpu, s->ncpu, false, &s->err)))
		return err;
	pr_lost_due(s->cpu, s->ncpu);
	s->state = PR_STOPPED;
	return 0;
}
PERFRING_API int perfring_session_add_tracepoint(struct perfring_session *s, const char *system,
						 const char *name, struct perfring_event **out)
{
	return s ? pr_add_tracepoint(&s->reg, system, name, out) : pr_null(NULL, __func__, "s");
}

PERFRING_API int perfring_session_add_software_opts(struct perfring_session *s,
						    enum perfring_software kind,
						    const struct perfring_software_opts *opts,
						    struct perfring_event **out)
{
	return s ? pr_add_software(&s->reg, kind, opts, out) : pr_null(NULL, __func__, "s");
}

PERFRING_API int perfring_session_add_software(struct perfring_session *s,
					       enum perfring_software kind, uint64_t period,
					       struct perfring_event **out)
{
	struct perfring_software_opts o = { .sz = sizeof(o), .period = period };

	return perfring_session_add_software_opts(s, kind, &o, out);
}

PERFRING_API int perfring_session_add_attr(struct perfring_session *s,
					   const struct perf_event_attr *attr,
					   struct perfring_event **out)
{
	return s ? pr_add_attr(&s->reg, attr, out) : pr_null(NULL, __func__, "s");
}

PERFRING_API int perfring_session_set_record_callback(struct perfring_session *s, uint32_t mask,
						      perfring_record_fn fn, void *ctx)
{
	return s ? pr_set_record_callback(&s->reg, mask, fn, ctx) : pr_null(NULL, __func__, "s");
}

PERFRING_API int perfring_session_set_lost_callback(struct perfring_session *s,
						    void (*fn)(int cpu, uint64_t lost, void *ctx),
						    void *ctx)
{
	return s ? pr_set_lost_callback(&s->reg, fn, ctx) : pr_null(NULL, __func__, "s");
}
