/* SPDX-License-Identifier: MIT */
/* Opening the rings: one dummy leader per CPU owns the mmapped ring; every
 * event (and, in pid mode, every thread) on that CPU is redirected into it. */
#include "rings/open.h"
#include "rings/lost.h"
#include "base/sys.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_TIDS 65536
/* Starts over when every listed thread exited before its open (R3,
 * docs/RULES.md). */
#define MAX_LISTINGS 8

/* What one pr_open_cpus call works with. */
struct opening {
	const struct pr_plan *p;
	pid_t *tids;                /* pid mode: the threads at start; else { -1 } */
	size_t ntids;
	struct pr_errbuf *e;
	bool all_gone;              /* every listed thread exited before its open */
};

static void leader_attr(const struct pr_plan *p, struct perf_event_attr *a);
static int open_grouped(struct opening *o, struct perf_event_attr *a,
			const struct perf_event_attr *named, const char *what, pid_t tid, int cpu,
			int group_fd, int *fd);
static int open_members(struct opening *o, struct pr_cpu *c, struct perfring_event *leader,
			pid_t tid, int group_fd);
static int open_in_group(struct opening *o, struct pr_cpu *c, struct perfring_event *ev,
			 pid_t tid, int group_fd);

static int syscall_err(struct pr_errbuf *e, const char *call, const char *what, int cpu, int err)
{
	char hint[320];

	pr_err_hint(hint, sizeof(hint), err, call);
	return pr_err(e, -err, "%s %s on CPU %d: %s%s", call, what, cpu, perfring_strerror(-err),
		      hint);
}

/* A failed call on an event: the hint may depend on its attr (R10). */
static int event_err(struct opening *o, const char *call, const struct perf_event_attr *a,
		     const char *what, int cpu, int err)
{
	char hint[384];

	pr_err_hint_attr(hint, sizeof(hint), err, call, a, what, o->p->pid);
	return pr_err(o->e, -err, "%s %s on CPU %d: %s%s", call, what, cpu,
		      perfring_strerror(-err), hint);
}

static int add_tid(struct opening *o, pid_t tid)
{
	pid_t *t;

	if (o->ntids >= MAX_TIDS)
		return pr_err(o->e, -E2BIG, "process %d has more than %d threads", o->p->pid,
			      MAX_TIDS);
	t = pr_realloc(o->tids, (o->ntids + 1) * sizeof(*t));
	if (!t)
		return pr_err(o->e, -ENOMEM, "out of memory listing the threads to watch");
	o->tids = t;
	o->tids[o->ntids++] = tid;
	return 0;
}

/* The threads of the watched process now; later ones come through inherit. */
static int list_threads(struct opening *o)
{
	int pid = o->p->pid, err = 0;
	char path[64];
	struct dirent *d;
	DIR *dir;

	if (o->p->cgroup_fd >= 0)
		return add_tid(o, o->p->cgroup_fd);
	if (pid <= 0)
		return add_tid(o, -1);
	if ((err = add_tid(o, pid)))
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir && errno == ENOENT)
		return pr_err(o->e, -ESRCH, "process %d exited during perfring_session_start", pid);
	if (!dir)
		return pr_err(o->e, -errno, "listing %s: %s", path, perfring_strerror(-errno));
	while (!err && (d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid > 0 && tid != pid)
			err = add_tid(o, (pid_t)tid);
	}
	closedir(dir);
	return err;
}

static bool any_exclude_kernel(const struct pr_plan *p)
{
	size_t i;

	for (i = 0; i < p->nevents; i++)
		if (p->events[i]->attr.exclude_kernel)
			return true;
	return false;
}

/* A PERF_SAMPLE_READ event's own (with ID and LOST, event.c), which its
 * samples are laid out by; the library's for every other. */
static uint64_t read_format_of(const struct perfring_event *ev)
{
	if (ev->attr.sample_type & PERF_SAMPLE_READ)
		return ev->attr.read_format;
	return pr_lost_read_format();
}

void pr_open_attr(const struct pr_plan *p, const struct perfring_event *ev,
		  struct perf_event_attr *a)
{
	if (ev) {
		*a = ev->attr;
		a->inherit = p->pid > 0;
		a->enable_on_exec = p->enable_on_exec;
		a->wakeup_events = p->wakeup_events;
		a->read_format = read_format_of(ev);
		/* A member counts whenever its leader does: enabling it while the
		 * leader already runs can leave it never scheduled (seen on 6.18:
		 * a task-clock member of a running cpu-clock leader read 0 in 1 of
		 * 3 runs). Its leader alone starts and stops the group. */
		if (ev->group)
			a->disabled = 0;
		/* CPU-wide in every scope (rings/open.h): exec enables no such event. */
		if (ev->kind == PR_EV_BPF)
			a->inherit = a->enable_on_exec = 0;
		/* SET_OUTPUT needs the same direction as the ring's leader. A
		 * caller's own write_backward stays, and R10 names it. */
		if (p->overwrite)
			a->write_backward = 1;
		return;
	}
	leader_attr(p, a);
}

/* An overwrite ring: backward, and its wakeup as rare as the kernel
 * allows (once a ring's worth; nobody waits on it). */
static void overwrite_attr(const struct pr_plan *p, struct perf_event_attr *a)
{
	a->write_backward = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((uint64_t)p->ring_pages * p->page_size > UINT32_MAX ?
					 UINT32_MAX : (uint64_t)p->ring_pages * p->page_size);
}

/* The profiler's kernel records (PERFRING_REC_KSYMBOL and on). The kernel
 * writes CGROUP and NAMESPACES records only into side-band events, which
 * attr.cgroup and attr.namespaces alone do not make (is_sb_event), so
 * ksymbol comes with them; the sink drops the KSYMBOL records not asked for. */
static void leader_profile_records(uint32_t m, struct perf_event_attr *a)
{
	a->ksymbol = !!(m & (PERFRING_REC_KSYMBOL | PERFRING_REC_CGROUP | PERFRING_REC_NAMESPACES));
	a->bpf_event = !!(m & PERFRING_REC_BPF_EVENT);
	a->cgroup = !!(m & PERFRING_REC_CGROUP);
	a->namespaces = !!(m & PERFRING_REC_NAMESPACES);
	a->text_poke = !!(m & PERFRING_REC_TEXT_POKE);
}

static void leader_attr(const struct pr_plan *p, struct perf_event_attr *a)
{
	uint32_t m = p->sink ? p->sink->mask : 0;

	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	pr_event_force_attr(a);
	a->inherit = p->pid > 0;
	a->enable_on_exec = p->enable_on_exec;
	a->exclude_kernel = any_exclude_kernel(p);
	a->comm = a->comm_exec = !!(m & PERFRING_REC_COMM);
	a->mmap = a->mmap2 = !!(m & PERFRING_REC_MMAP);
	a->task = !!(m & PERFRING_REC_TASK);
	a->context_switch = !!(m & PERFRING_REC_SWITCH);
	leader_profile_records(m, a);
	/* Every fd's read gives its drops (rings/lost.c), this one's too. */
	a->read_format = pr_lost_read_format();
	/* The ring is created by this event, so its attr sets the watermark. */
	if (p->wakeup_watermark) {
		a->watermark = 1;
		a->wakeup_watermark = p->wakeup_watermark;
	}
	if (p->overwrite)
		overwrite_attr(p, a);
}

/* -ESRCH with no sentence: thread tid exited after the listing, and the
 * caller skips it (R3). named: the attr the sentence is about. */
static int open_one(struct opening *o, struct perf_event_attr *a,
		    const struct perf_event_attr *named, const char *what, pid_t tid, int cpu,
		    int *fd)
{
	return open_grouped(o, a, named, what, tid, cpu, -1, fd);
}

static int open_grouped(struct opening *o, struct perf_event_attr *a,
			const struct perf_event_attr *named, const char *what, pid_t tid, int cpu,
			int group_fd, int *fd)
{
	/* In a cgroup scope tid is its directory's fd; a CPU-wide event's is -1. */
	bool cg = o->p->cgroup_fd >= 0 && tid == o->p->cgroup_fd;

	*fd = pr_perf_event_open(a, tid, cpu, group_fd,
				 PERF_FLAG_FD_CLOEXEC | (cg ? PERF_FLAG_PID_CGROUP : 0));
	if (*fd >= 0)
		return 0;
	if (o->p->pid > 0 && errno == ESRCH)
		return -ESRCH;
	return event_err(o, "perf_event_open", named, what, cpu, errno);
}

static void drop_tid(struct opening *o, size_t t)
{
	memmove(&o->tids[t], &o->tids[t + 1], (o->ntids - t - 1) * sizeof(*o->tids));
	o->ntids--;
}

static int add_id(struct opening *o, struct pr_cpu *c, int fd, struct perfring_event *ev)
{
	struct pr_idmap *ids;
	uint64_t id;

	if (pr_ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)&id) < 0)
		return syscall_err(o->e, "ioctl(PERF_EVENT_IOC_ID)", ev ? ev->name : "leader",
				   c->cpu, errno);
	ids = pr_realloc(c->ids, (c->nids + 1) * sizeof(*ids));
	if (!ids)
		return pr_err(o->e, -ENOMEM, "out of memory recording event ids");
	c->ids = ids;
	c->ids[c->nids++] = (struct pr_idmap){ id, ev };
	return 0;
}

static int push_fd(struct opening *o, struct pr_cpu *c, int fd)
{
	int *fds = pr_realloc(c->fds, (c->nfds + 1) * sizeof(*fds));

	if (!fds) {
		close(fd);
		return pr_err(o->e, -ENOMEM, "out of memory recording fds");
	}
	c->fds = fds;
	c->fds[c->nfds++] = fd;
	return 0;
}

static int map_ring(struct opening *o, struct pr_cpu *c)
{
	size_t page = o->p->page_size, len = page * (1 + (size_t)o->p->ring_pages);
	int err;

	c->scratch = pr_malloc(PR_RING_SCRATCH);
	if (!c->scratch)
		return pr_err(o->e, -ENOMEM, "out of memory for CPU %d's scratch buffer", c->cpu);
	/* Read-only is what makes the kernel overwrite instead of waiting. */
	c->map = pr_mmap(len, o->p->overwrite ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
			 c->leader_fd);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return syscall_err(o->e, "mmap", "ring", c->cpu, errno);
	}
	c->map_len = len;
	err = pr_ring_init(&c->ring, c->map, (uint8_t *)c->map + page,
			   (uint64_t)o->p->ring_pages * page, c->scratch);
	return err ? pr_err(o->e, err, "CPU %d: the kernel's ring is not usable", c->cpu) : 0;
}

/* The kernel answers a bad filter with EINVAL or ENOENT (an unknown field);
 * both mean the filter, not a missing event, so both are -EINVAL. */
static int filter_err(struct pr_errbuf *e, const struct perfring_event *ev, int cpu, int err)
{
	/* Quoted in part, so that the fix still fits in the sentence. */
	int n = (int)strlen(ev->filter), q = n > 160 ? 160 : n;

	return pr_err(e, err == ENOENT ? -EINVAL : -err,
		      "ioctl(PERF_EVENT_IOC_SET_FILTER) %s on CPU %d: the kernel refused filter "
		      "\"%.*s%s\" (%d bytes; %s); check its syntax and the field names in the "
		      "tracepoint's format file", ev->name, cpu, q, ev->filter, q < n ? "..." : "",
		      n, perfring_strerror(err));
}

/* Opens ev (NULL = a dummy tracker) for one thread on c and redirects it;
 * then the members of its group, if it leads one. */
static int open_redirected(struct opening *o, struct pr_cpu *c, struct perfring_event *ev,
			   pid_t tid)
{
	return open_in_group(o, c, ev, tid, -1);
}

static int open_in_group(struct opening *o, struct pr_cpu *c, struct perfring_event *ev,
			 pid_t tid, int group_fd)
{
	struct perf_event_attr a;
	const char *what = ev ? ev->name : "dummy";
	int fd, err;

	pr_open_attr(o->p, ev, &a);
	if ((err = open_grouped(o, &a, &a, what, tid, c->cpu, group_fd, &fd)) ||
	    (err = push_fd(o, c, fd)))
		return err;
	if (ev && ev->members && (err = open_members(o, c, ev, tid, fd)))
		return err;
	if (pr_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)c->leader_fd) < 0)
		return event_err(o, "ioctl(PERF_EVENT_IOC_SET_OUTPUT)", &a, what, c->cpu, errno);
	if (ev && ev->filter && pr_ioctl(fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)ev->filter) < 0)
		return filter_err(o->e, ev, c->cpu, errno);
	return add_id(o, c, fd, ev);
}

/* The members of leader's group for one thread, in the order they were
 * added, each with the leader's fd as group_fd. */
static int open_members(struct opening *o, struct pr_cpu *c, struct perfring_event *leader,
			pid_t tid, int group_fd)
{
	size_t e;
	int err;

	for (e = 0; e < o->p->nevents; e++)
		if (o->p->events[e]->group == leader &&
		    (err = open_in_group(o, c, o->p->events[e], tid, group_fd)))
			return err;
	return 0;
}

/* The leader goes to the first listed thread that is still there; when
 * none is, -ESRCH with no sentence and all_gone (R3). */
static int open_leader(struct opening *o, struct pr_cpu *c)
{
	const struct pr_plan *p = o->p;
	struct perf_event_attr a;
	int err = -ESRCH;

	leader_attr(p, &a);
	/* Name the user's first event: the dummy leader is our own device. */
	while (o->ntids && (err = open_one(o, &a, p->nevents ? &p->events[0]->attr : &a,
					   p->nevents ? p->events[0]->name : "dummy",
					   o->tids[0], c->cpu, &c->leader_fd)) == -ESRCH)
		drop_tid(o, 0);
	o->all_gone = err == -ESRCH;
	return err;
}

/* ev (NULL = a dummy tracker) for threads from..ntids; a thread that exited
 * since the listing is dropped from it (R3). */
static int open_threads(struct opening *o, struct pr_cpu *c, struct perfring_event *ev,
			size_t from)
{
	size_t t = from;
	int err;

	while (t < o->ntids) {
		err = open_redirected(o, c, ev, o->tids[t]);
		if (err == -ESRCH)
			drop_tid(o, t);
		else if (err)
			return err;
		else
			t++;
	}
	return 0;
}

static int open_cpu(struct opening *o, struct pr_cpu *c)
{
	const struct pr_plan *p = o->p;
	size_t e;
	int err;

	c->sink = p->sink;
	if ((err = open_leader(o, c)) || (err = map_ring(o, c)) ||
	    (err = add_id(o, c, c->leader_fd, NULL)) || (err = open_threads(o, c, NULL, 1)))
		return err;
	/* A group's members are opened with their leader (open_members). */
	for (e = 0; e < p->nevents; e++)
		if (p->events[e]->kind != PR_EV_BPF && !p->events[e]->group &&
		    (err = open_threads(o, c, p->events[e], 0)))
			return err;
	pr_cpu_ids_ready(c);
	return 0;
}

/* One listing of the threads and an open of every CPU from it. */
static int open_listed(struct opening *o, struct pr_cpu *cpu, size_t n)
{
	size_t i;
	int err = list_threads(o);

	for (i = 0; !err && i < n; i++)
		err = open_cpu(o, &cpu[i]);
	free(o->tids);
	o->tids = NULL;
	o->ntids = 0;
	if (err)
		pr_close_cpus(cpu, n);
	return err;
}

int pr_open_cpus(const struct pr_plan *p, struct pr_cpu *cpu, size_t n, struct pr_errbuf *e)
{
	struct opening o = { .p = p, .e = e };
	size_t i, tries = 0;
	int err;

	/* Before anything else can fail: pr_close_cpus() must not see fd 0. */
	for (i = 0; i < n; i++)
		cpu[i].leader_fd = -1;
	/* A bare -ESRCH: every listed thread exited before its open. New ones
	 * may have come meanwhile, so the listing is made again; a process
	 * that is gone has no threads to list, or only exiting ones. */
	while ((err = open_listed(&o, cpu, n)) == -ESRCH && o.all_gone && ++tries < MAX_LISTINGS)
		o.all_gone = false;
	if (o.all_gone)
		return pr_err(e, -ESRCH, "process %d exited during perfring_session_start (its "
			      "threads exited as they were opened, %d times)", p->pid, MAX_LISTINGS);
	for (i = 0; !err && i < n; i++)
		cpu[i].state = PR_CPU_ON;
	return err;
}

int pr_open_cpuwide(const struct pr_plan *p, struct pr_cpu *c, struct perfring_event *ev,
		    struct pr_errbuf *e, int *fd)
{
	struct opening o = { .p = p, .e = e };
	int err = open_redirected(&o, c, ev, -1);

	if (err)
		return err;
	*fd = c->fds[c->nfds - 1];
	pr_cpu_ids_ready(c);
	return 0;
}

/* Disabling first: a forked child may hold copies of these fds, and an
 * event stays enabled, and counting, for as long as any copy is open (R5). */
static void close_cpu(struct pr_cpu *c)
{
	size_t i;

	if (c->leader_fd >= 0)
		pr_ioctl(c->leader_fd, PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < c->nfds; i++)
		pr_ioctl(c->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	if (c->map)
		munmap(c->map, c->map_len);
	if (c->leader_fd >= 0)
		close(c->leader_fd);
	free(c->fds);
	free(c->ids);
	free(c->scratch);
	c->fds = NULL;
	c->ids = NULL;
	c->scratch = NULL;
	c->map = NULL;
	c->nfds = c->nids = 0;
	c->leader_fd = -1;
	c->state = PR_CPU_OFF;
}

void pr_close_cpus(struct pr_cpu *cpu, size_t n)
{
	size_t i;

	for (i = 0; cpu && i < n; i++)
		close_cpu(&cpu[i]);
}

static int toggle(struct pr_errbuf *e, int fd, int cpu, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;

	if (pr_ioctl(fd, req, 0) < 0)
		return syscall_err(e, on ? "ioctl(PERF_EVENT_IOC_ENABLE)" :
				   "ioctl(PERF_EVENT_IOC_DISABLE)", "event", cpu, errno);
	return 0;
}

int pr_enable_cpus(struct pr_cpu *cpu, size_t n, bool on, struct pr_errbuf *e)
{
	size_t i, j;
	int err;

	for (i = 0; i < n; i++) {
		if (!pr_cpu_on(&cpu[i]))
			continue;
		if ((err = toggle(e, cpu[i].leader_fd, cpu[i].cpu, on)))
			return err;
		for (j = 0; j < cpu[i].nfds; j++)
			if ((err = toggle(e, cpu[i].fds[j], cpu[i].cpu, on)))
				return err;
	}
	return 0;
}
