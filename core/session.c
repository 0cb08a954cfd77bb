/* SPDX-License-Identifier: MIT */
/* The session's lifecycle (new, start, stop, free), its CPU set and fds,
 * and the public calls that add events to its registry. */
#include "session.h"
#include "bpf.h"
#include "hotplug.h"
#include "opts.h"
#include "read/merge.h"
#include "kernel/cpulist.h"
#include "kernel/lost.h"
#include "base/sys.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* struct perfring_opts as 0.1 published it: up to flush_ms. */
#define PR_OPTS_V01_SZ offsetof(struct perfring_opts, enable_on_exec)

static bool process_is_zombie(pid_t pid)
{
	char path[64], *text = NULL, *p;
	bool z = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pr_read_file(path, 4096, &text, NULL) == 0 && (p = strrchr(text, ')')))
		z = p[1] == ' ' && p[2] == 'Z';
	free(text);
	return z;
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
	if ((err = pr_opts_copy(NULL, "perfring_opts", &s->o, sizeof(s->o), PR_OPTS_V01_SZ, opts)) ||
	    (err = pr_opts_check(&s->o, s->page_size, &s->data_size)) ||
	    (err = pr_opts_cpus(&s->o, &s->cpus, &s->ncpu)) || (err = pr_hotplug_new(s)) ||
	    (err = pr_session_cgroup(s))) {
		pr_hotplug_free(s);
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

/* Lets go of the rings: merge, fds, mappings. */
static void close_rings(struct perfring_session *s)
{
	pr_merge_free(s->merge);
	pr_close_cpus(s->cpu, s->ncpu);
	free(s->cpu);
	free(s->fds);
	s->merge = NULL;
	s->cpu = NULL;
	s->fds = NULL;
}

static void session_free(struct perfring_session *s)
{
	struct pr_attachment *a;

	while ((a = s->attached)) {
		s->attached = a->next;
		a->release(a);
	}
	pr_bpf_unmap(s);
	close_rings(s);
	pr_hotplug_free(s);
	if (s->pidfd >= 0)
		close(s->pidfd);
	pr_registry_free(&s->reg);
	free(s->cpus);
	free(s);
}

PERFRING_API void perfring_session_free(struct perfring_session *s)
{
	if (!s)
		return;
	if (!__atomic_load_n(&s->depth, __ATOMIC_ACQUIRE)) {
		session_free(s);
		return;
	}
	/* Inside a callback (R7, docs/RULES.md): no callback after this one,
	 * and the last parse to end frees. */
	if (__atomic_exchange_n(&s->closing, true, __ATOMIC_ACQ_REL))
		return;
	pr_registry_silence(&s->reg);
}

void pr_session_free_deferred(struct perfring_session *s)
{
	session_free(s);
}

void pr_attach(struct perfring_session *s, struct pr_attachment *a)
{
	a->next = s->attached;
	s->attached = a;
}

void pr_detach(struct perfring_session *s, struct pr_attachment *a)
{
	struct pr_attachment **p;

	for (p = &s->attached; *p; p = &(*p)->next) {
		if (*p == a) {
			*p = a->next;
			return;
		}
	}
}

bool pr_session_process_gone(const struct perfring_session *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

	if (s->o.pid <= 0)
		return true;
	if (s->pidfd >= 0)
		return poll(&p, 1, 0) == 1;
	/* No pidfd (an old kernel): a zombie still takes signals, so read its state. */
	return kill(s->o.pid, 0) < 0 || process_is_zombie(s->o.pid);
}

int pr_session_busy(struct perfring_session *s)
{
	return pr_err(&s->err, -EBUSY, "a ring is being parsed already (by a callback of that "
		      "parse, or by another thread): a merged parse needs every ring");
}

PERFRING_API const char *perfring_session_last_error(const struct perfring_session *s)
{
	return s ? s->err.msg : pr_err_thread();
}

PERFRING_API size_t perfring_session_fds(const struct perfring_session *s,
					 const struct perfring_cpu_fd **out)
{
	if (out)
		*out = s ? s->fds : NULL;
	return s && s->fds ? pr_session_nfds(s) : 0;
}

PERFRING_API int perfring_session_fd_for_cpu(const struct perfring_session *s, int cpu)
{
	int i;

	if (!s)
		return pr_null(NULL, __func__, "s");
	i = pr_cpu_index(s, cpu);
	return i < 0 || !pr_session_cpu_on(s, (size_t)i) ? -ENOENT : s->cpu[i].leader_fd;
}

PERFRING_API int perfring_session_cpu_stats(const struct perfring_session *s, int cpu,
					    struct perfring_cpu_stats *out)
{
	struct perfring_session *m = (struct perfring_session *)s;
	int i;

	if (!s || !out)
		return pr_null(pr_serr(m), __func__, s ? "out" : "s");
	i = pr_cpu_index(s, cpu);
	if (i < 0)
		return pr_err(&m->err, -ENOENT, "cpu_stats: CPU %d is not watched by this session",
			      cpu);
	pr_cpu_stats_read(&s->cpu[i], out);
	return 0;
}

void pr_session_plan(const struct perfring_session *s, struct pr_plan *p)
{
	*p = (struct pr_plan){
		.events = s->reg.events, .nevents = s->reg.nevents, .sink = &s->reg.sink,
		.pid = s->o.pid, .ring_pages = s->o.ring_pages, .page_size = s->page_size,
		.wakeup_watermark = s->o.wakeup_watermark, .wakeup_events = s->o.wakeup_events,
		.enable_on_exec = s->o.enable_on_exec != 0, .cgroup_fd = s->cgroup_fd,
		.overwrite = s->o.overwrite != 0,
	};
}

/* The CPU slots, their fd list and the merge over them. */
static int make_rings(struct perfring_session *s, struct pr_cpu *cpu)
{
	size_t i;

	s->cpu = cpu;
	s->fds = pr_calloc(s->ncpu ? s->ncpu : 1, sizeof(*s->fds));
	s->merge = s->fds ? pr_merge_new(s->cpu, (uint32_t)s->ncpu) : NULL;
	if (!s->merge)
		return pr_err(&s->err, -ENOMEM, "out of memory for %zu CPUs", s->ncpu);
	for (i = 0; i < s->ncpu; i++) {
		s->cpu[i].sink = &s->reg.sink;
		s->fds[i] = (struct perfring_cpu_fd){ s->cpu[i].cpu, s->cpu[i].leader_fd };
	}
	pr_hotplug_fds(s);
	return 0;
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
	if ((err = s->hp ? pr_hotplug_open(s, cpu, &p) : pr_open_cpus(&p, cpu, s->ncpu, &s->err))) {
		free(cpu);
		return err;
	}
	/* With enable_on_exec the kernel enables them at the process's execve. */
	if ((err = make_rings(s, cpu)) || (err = pr_bpf_start(s, cpu)) ||
	    (!s->o.enable_on_exec && (err = pr_enable_cpus(s->cpu, s->ncpu, true, &s->err))) ||
	    (s->o.enable_on_exec && (err = pr_bpf_enable(s)))) {
		pr_bpf_unmap(s);
		close_rings(s);
	}
	return err;
}

int pr_session_adopt(struct perfring_session *s, struct pr_cpu *cpu, size_t n)
{
	size_t i;
	int *cpus = pr_calloc(n ? n : 1, sizeof(*cpus));
	int err;

	if (!cpus)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		cpus[i] = cpu[i].cpu;
	free(s->cpus);
	s->cpus = cpus;
	s->ncpu = s->o.cpu_cnt = n;
	if ((err = make_rings(s, cpu))) {
		s->cpu = NULL; /* still the caller's */
		close_rings(s);
		return err;
	}
	s->reg.frozen = true;
	s->state = PR_STARTED;
	return 0;
}

/* After a stop: the same events, rings and stats, enabled again (R11). A
 * failure leaves every event disabled, the session stopped. */
static int restart(struct perfring_session *s)
{
	struct pr_errbuf undo;
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
	if (!s->reg.nevents && !s->reg.sink.fn)
		return pr_err(&s->err, -EINVAL, "perfring_session_start: no events added and no "
			      "record callback set");
	if ((err = pr_bpf_check(s)) || (err = open_rings(s)))
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
