/* SPDX-License-Identifier: MIT */
/* What the session's parts share: its CPUs' fds and rings, the features'
 * hooks run on every CPU change, attachments, its end in pid mode, the
 * deferred free (R7), and the read-only public calls. */
#include "session.h"
#include "feature.h"
#include "read/merge.h"
#include "rings/lost.h"
#include "base/sys.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void pr_session_close_rings(struct perfring_session *s)
{
	pr_merge_free(s->merge);
	pr_close_cpus(s->cpu, s->ncpu);
	free(s->cpu);
	free(s->fds);
	s->merge = NULL;
	s->cpu = NULL;
	s->fds = NULL;
	s->nfds = 0;
}

static void session_free(struct perfring_session *s)
{
	struct pr_attachment *a;

	while ((a = s->attached)) {
		s->attached = a->next;
		a->release(a);
	}
	PR_EACH_FEATURE(s, f)
		if ((*f)->unmap)
			(*f)->unmap(s);
	pr_session_close_rings(s);
	PR_EACH_FEATURE(s, f)
		if ((*f)->fini)
			(*f)->fini(s);
	if (s->pidfd >= 0)
		close(s->pidfd);
	pr_registry_free(&s->reg);
	free(s->cpus);
	free(s);
}

/* What the order window kept goes before the rings do: one last pass
 * without it, as perfring_reactor_free's. false: a callback of that pass
 * freed the session (R7), which its leave did. */
static bool deliver_kept(struct perfring_session *s)
{
	struct pr_pass p = { 0 };

	if (!s->o.order_window_ns || s->state == PR_NEW || !s->merge || pr_merge_busy(s->merge))
		return true;
	pr_session_enter(s);
	pr_merge_pass(s->merge, &p);
	return !pr_session_leave(s);
}

PERFRING_API void perfring_session_free(struct perfring_session *s)
{
	if (!s)
		return;
	if (!__atomic_load_n(&s->depth, __ATOMIC_ACQUIRE)) {
		if (deliver_kept(s))
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

static bool process_gone(const struct perfring_session *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

	if (s->pidfd >= 0)
		return poll(&p, 1, 0) == 1;
	/* No pidfd (an old kernel): a zombie still takes signals, so read its state. */
	return kill(s->o.pid, 0) < 0 || process_is_zombie(s->o.pid);
}

bool pr_session_process_gone(struct perfring_session *s)
{
	if (s->o.pid <= 0)
		return true;
	if (!process_gone(s))
		return false;
	/* R4: a ring full to the process's end never gets the LOST record of
	 * its last drops; only the events' totals hold them, which, as after
	 * stop, each ring's next parse reads. */
	pr_lost_due(s->cpu, s->ncpu);
	return true;
}

int pr_session_busy(struct perfring_session *s)
{
	return pr_err(&s->err, -EBUSY, "a ring is being parsed already (by a callback of that "
		      "parse, or by another thread): a merged parse needs every ring");
}

void pr_session_fds_update(struct perfring_session *s)
{
	size_t i, k = 0;

	for (i = 0; i < s->ncpu; i++)
		if (pr_cpu_on(&s->cpu[i]))
			s->fds[k++] = (struct perfring_cpu_fd){ s->cpu[i].cpu, s->cpu[i].leader_fd };
	s->nfds = k;
}

void pr_session_cpu_down(struct perfring_session *s, struct pr_cpu *c)
{
	PR_EACH_FEATURE(s, f)
		if ((*f)->cpu_down)
			(*f)->cpu_down(s, c);
}

int pr_session_cpu_up(struct perfring_session *s, struct pr_cpu *c)
{
	const struct pr_feature *const *done;
	int err;

	PR_EACH_FEATURE(s, f) {
		if (!(*f)->cpu_up || !(err = (*f)->cpu_up(s, c)))
			continue;
		for (done = s->features; done != f; done++)
			if ((*done)->cpu_down)
				(*done)->cpu_down(s, c);
		return err;
	}
	return 0;
}

int pr_session_tick(struct perfring_session *s)
{
	int n = 0, k;

	PR_EACH_FEATURE(s, f) {
		if (!(*f)->tick)
			continue;
		if ((k = (*f)->tick(s)) == -ECANCELED)
			return k;
		n += k > 0 ? k : 0;
	}
	return n;
}

int pr_session_rings(struct perfring_session *s, struct pr_cpu *cpu)
{
	size_t i;

	s->cpu = cpu;
	s->fds = pr_calloc(s->ncpu ? s->ncpu : 1, sizeof(*s->fds));
	s->merge = s->fds ? pr_merge_new(s->cpu, (uint32_t)s->ncpu) : NULL;
	if (!s->merge)
		return pr_err(&s->err, -ENOMEM, "out of memory for %zu CPUs", s->ncpu);
	for (i = 0; i < s->ncpu; i++)
		s->cpu[i].sink = &s->reg.sink;
	pr_session_fds_update(s);
	return 0;
}

int pr_session_adopt(struct perfring_session *s, struct pr_cpu *cpu, size_t n)
{
	size_t i;
	int *cpus = pr_calloc(n ? n : 1, sizeof(*cpus));
	int err;

	if (!cpus)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		cpus[i] = cpu[i].cpu;
		cpu[i].state = PR_CPU_ON; /* read from memory: on, without fds */
	}
	free(s->cpus);
	s->cpus = cpus;
	s->ncpu = s->o.cpu_cnt = n;
	if ((err = pr_session_rings(s, cpu))) {
		s->cpu = NULL; /* still the caller's */
		pr_session_close_rings(s);
		return err;
	}
	s->reg.frozen = true;
	s->state = PR_STARTED;
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

PERFRING_API const char *perfring_session_last_error(const struct perfring_session *s)
{
	return s ? s->err.msg : pr_err_thread();
}

PERFRING_API size_t perfring_session_fds(const struct perfring_session *s,
					 const struct perfring_cpu_fd **out)
{
	if (out)
		*out = s ? s->fds : NULL;
	return s && s->fds ? s->nfds : 0;
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

PERFRING_API int perfring_session_order_stats(const struct perfring_session *s,
					      struct perfring_order_stats *out)
{
	const size_t first = offsetof(struct perfring_order_stats, late_after_window) +
			     sizeof(out->late_after_window);
	struct perfring_order_stats st = { .sz = sizeof(st) };
	struct perfring_session *m = (struct perfring_session *)s;
	size_t sz;

	if (!s || !out)
		return pr_null(pr_serr(m), __func__, s ? "out" : "s");
	if ((sz = out->sz) < first)
		return pr_err(&m->err, -EINVAL, "order_stats: out->sz %zu is below the first "
			      "struct perfring_order_stats (%zu bytes): set it to sizeof",
			      sz, first);
	if (s->merge) {
		st.passes = __atomic_load_n(&s->merge->win.passes, __ATOMIC_RELAXED);
		st.late_after_window = __atomic_load_n(&s->merge->win.after, __ATOMIC_RELAXED);
	}
	if (sz > sizeof(st))
		memset((char *)out + sizeof(st), 0, sz - sizeof(st));
	memcpy(out, &st, sz < sizeof(st) ? sz : sizeof(st));
	out->sz = sz;
	return 0;
}

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
