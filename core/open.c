/* SPDX-License-Identifier: MIT */
/* Opening a session: one dummy leader per CPU owns the mmapped ring; every
 * event (and, in pid mode, every thread) on that CPU is redirected into it. */
#include "event.h"
#include "parse.h"
#include "session.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_TIDS 65536

static void leader_attr(const struct perfring_session *s, struct perf_event_attr *a);

static int syscall_err(struct perfring_session *s, const char *call, const char *what, int cpu,
		       int err)
{
	char hint[320];

	pr_err_hint(hint, sizeof(hint), err, call);
	return pr_err(s, -err, "%s %s on CPU %d: %s%s", call, what, cpu, perfring_strerror(-err),
		      hint);
}

static int add_tid(struct perfring_session *s, pid_t tid)
{
	pid_t *t;

	if (s->ntids >= MAX_TIDS)
		return pr_err(s, -E2BIG, "process %d has more than %d threads", s->o.pid, MAX_TIDS);
	t = pr_realloc(s->tids, (s->ntids + 1) * sizeof(*t));
	if (!t)
		return pr_err(s, -ENOMEM, "out of memory listing the threads to watch");
	s->tids = t;
	s->tids[s->ntids++] = tid;
	return 0;
}

/* The threads of the watched process now; later ones come through inherit. */
static int list_threads(struct perfring_session *s)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	if (s->o.pid <= 0)
		return add_tid(s, -1);
	if ((err = add_tid(s, s->o.pid)))
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task", s->o.pid);
	dir = opendir(path);
	if (!dir)
		return pr_err(s, -errno, "listing %s: %s (has process %d exited?)", path,
			      perfring_strerror(-errno), s->o.pid);
	while (!err && (d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid > 0 && tid != s->o.pid)
			err = add_tid(s, (pid_t)tid);
	}
	closedir(dir);
	return err;
}

static bool any_exclude_kernel(const struct perfring_session *s)
{
	size_t i;

	for (i = 0; i < s->nevents; i++)
		if (s->events[i]->attr.exclude_kernel)
			return true;
	return false;
}

void pr_open_attr(const struct perfring_session *s, const struct perfring_event *ev,
		  struct perf_event_attr *a)
{
	if (ev) {
		*a = ev->attr;
		a->inherit = s->o.pid > 0;
		a->enable_on_exec = s->o.enable_on_exec != 0;
		a->wakeup_events = s->o.wakeup_events;
		return;
	}
	leader_attr(s, a);
}

static void leader_attr(const struct perfring_session *s, struct perf_event_attr *a)
{
	uint32_t m = s->rec_mask;

	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	pr_event_force_attr(a);
	a->inherit = s->o.pid > 0;
	a->enable_on_exec = s->o.enable_on_exec != 0;
	a->exclude_kernel = any_exclude_kernel(s);
	a->comm = a->comm_exec = !!(m & PERFRING_REC_COMM);
	a->mmap = a->mmap2 = !!(m & PERFRING_REC_MMAP);
	a->task = !!(m & PERFRING_REC_TASK);
	a->context_switch = !!(m & PERFRING_REC_SWITCH);
	/* The ring is created by this event, so its attr sets the watermark. */
	if (s->o.wakeup_watermark) {
		a->watermark = 1;
		a->wakeup_watermark = s->o.wakeup_watermark;
	}
}

static int open_one(struct perfring_session *s, struct perf_event_attr *a, const char *what,
		    pid_t tid, int cpu, int *fd)
{
	*fd = pr_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (*fd < 0)
		return syscall_err(s, "perf_event_open", what, cpu, errno);
	return 0;
}

static int add_id(struct perfring_session *s, struct pr_cpu *c, int fd,
		  struct perfring_event *ev)
{
	struct pr_idmap *ids;
	uint64_t id;

	if (pr_ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)&id) < 0)
		return syscall_err(s, "ioctl(PERF_EVENT_IOC_ID)", ev ? ev->name : "leader",
				   c->cpu, errno);
	ids = pr_realloc(c->ids, (c->nids + 1) * sizeof(*ids));
	if (!ids)
		return pr_err(s, -ENOMEM, "out of memory recording event ids");
	c->ids = ids;
	c->ids[c->nids++] = (struct pr_idmap){ id, ev };
	return 0;
}

static int push_fd(struct perfring_session *s, struct pr_cpu *c, int fd)
{
	int *fds = pr_realloc(c->fds, (c->nfds + 1) * sizeof(*fds));

	if (!fds) {
		close(fd);
		return pr_err(s, -ENOMEM, "out of memory recording fds");
	}
	c->fds = fds;
	c->fds[c->nfds++] = fd;
	return 0;
}

static int map_ring(struct perfring_session *s, struct pr_cpu *c)
{
	size_t len = s->page_size * (1 + (size_t)s->o.ring_pages);
	int err;

	c->scratch = pr_malloc(PR_RING_SCRATCH);
	if (!c->scratch)
		return pr_err(s, -ENOMEM, "out of memory for CPU %d's scratch buffer", c->cpu);
	c->map = pr_mmap(len, PROT_READ | PROT_WRITE, MAP_SHARED, c->leader_fd);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return syscall_err(s, "mmap", "ring", c->cpu, errno);
	}
	c->map_len = len;
	err = pr_ring_init(&c->ring, c->map, (uint8_t *)c->map + s->page_size, s->data_size,
			   c->scratch);
	return err ? pr_err(s, err, "CPU %d: the kernel's ring is not usable", c->cpu) : 0;
}

/* The kernel answers a bad filter with EINVAL or ENOENT (an unknown field);
 * both mean the filter, not a missing event, so both are -EINVAL. */
static int filter_err(struct perfring_session *s, const struct perfring_event *ev, int cpu,
		      int err)
{
	return pr_err(s, err == ENOENT ? -EINVAL : -err,
		      "ioctl(PERF_EVENT_IOC_SET_FILTER) %s on CPU %d: the kernel refused filter "
		      "\"%s\" (%s); check its syntax and the field names in the tracepoint's "
		      "format file", ev->name, cpu, ev->filter, perfring_strerror(err));
}

/* Opens ev (NULL = a dummy tracker) for one thread on c and redirects it. */
static int open_redirected(struct perfring_session *s, struct pr_cpu *c,
			   struct perfring_event *ev, pid_t tid)
{
	struct perf_event_attr a;
	const char *what = ev ? ev->name : "dummy";
	int fd, err;

	pr_open_attr(s, ev, &a);
	if ((err = open_one(s, &a, what, tid, c->cpu, &fd)) || (err = push_fd(s, c, fd)))
		return err;
	if (pr_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)c->leader_fd) < 0)
		return syscall_err(s, "ioctl(PERF_EVENT_IOC_SET_OUTPUT)", what, c->cpu, errno);
	if (ev && ev->filter && pr_ioctl(fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)ev->filter) < 0)
		return filter_err(s, ev, c->cpu, errno);
	return add_id(s, c, fd, ev);
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct pr_idmap *)a)->id, y = ((const struct pr_idmap *)b)->id;

	return (x > y) - (x < y);
}

static int open_cpu(struct perfring_session *s, struct pr_cpu *c)
{
	struct perf_event_attr a;
	size_t t, e;
	int err;

	leader_attr(s, &a);
	/* Name the user's first event: the dummy leader is our own device. */
	if ((err = open_one(s, &a, s->nevents ? s->events[0]->name : "dummy", s->tids[0], c->cpu,
			    &c->leader_fd)) ||
	    (err = map_ring(s, c)) || (err = add_id(s, c, c->leader_fd, NULL)))
		return err;
	for (t = 1; t < s->ntids; t++)
		if ((err = open_redirected(s, c, NULL, s->tids[t])))
			return err;
	for (e = 0; e < s->nevents; e++)
		for (t = 0; t < s->ntids; t++)
			if ((err = open_redirected(s, c, s->events[e], s->tids[t])))
				return err;
	qsort(c->ids, c->nids, sizeof(*c->ids), cmp_id);
	c->last = c->ids[0];
	return 0;
}

static int make_epoll(struct perfring_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t i;

	s->epfd = pr_epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return pr_err(s, -errno, "epoll_create1: %s", perfring_strerror(-errno));
	for (i = 0; i < s->ncpu; i++) {
		ev.data.u64 = i;
		if (pr_epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->cpu[i].leader_fd, &ev) < 0)
			return syscall_err(s, "epoll_ctl(ADD)", "ring fd", s->cpu[i].cpu, errno);
	}
	/* The flush runs on a timerfd in the same set, so waits need no timeout:
	 * a timed epoll_wait starts and cancels a kernel timer on every sleep. */
	s->tfd = pr_timerfd_create(TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->tfd < 0)
		return pr_err(s, -errno, "timerfd_create: %s", perfring_strerror(-errno));
	ev.data.u64 = PR_FLUSH_TOKEN;
	if (pr_epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev) < 0)
		return pr_err(s, -errno, "epoll_ctl(ADD) of the flush timer: %s",
			      perfring_strerror(-errno));
	return 0;
}

static int alloc_cpus(struct perfring_session *s)
{
	size_t i;

	s->cpu = pr_calloc(s->ncpu, sizeof(*s->cpu));
	if (!s->cpu)
		return pr_err(s, -ENOMEM, "out of memory for %zu CPUs", s->ncpu);
	/* Before anything else can fail: close_cpu() must not see fd 0. */
	for (i = 0; i < s->ncpu; i++) {
		s->cpu[i].cpu = s->cpus[i];
		s->cpu[i].leader_fd = -1;
	}
	s->fds = pr_calloc(s->ncpu, sizeof(*s->fds));
	if (!s->fds)
		return pr_err(s, -ENOMEM, "out of memory for %zu CPUs", s->ncpu);
	return pr_merge_init(s) ? pr_err(s, -ENOMEM, "out of memory for %zu CPUs", s->ncpu) : 0;
}

int pr_session_open(struct perfring_session *s)
{
	size_t i;
	int err;

	if ((err = list_threads(s)) || (err = alloc_cpus(s)))
		goto fail;
	for (i = 0; i < s->ncpu; i++) {
		if ((err = open_cpu(s, &s->cpu[i])))
			goto fail;
		s->fds[i] = (struct perfring_cpu_fd){ s->cpu[i].cpu, s->cpu[i].leader_fd };
	}
	if (pr_wakeup_mode(s) && (err = make_epoll(s)))
		goto fail;
	return 0;
fail:
	pr_session_close(s);
	return err;
}

static void close_cpu(struct pr_cpu *c)
{
	size_t i;

	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	if (c->map)
		munmap(c->map, c->map_len);
	if (c->leader_fd >= 0)
		close(c->leader_fd);
	free(c->fds);
	free(c->ids);
	free(c->scratch);
}

void pr_session_close(struct perfring_session *s)
{
	size_t i;

	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	s->epfd = s->tfd = -1;
	for (i = 0; s->cpu && i < s->ncpu; i++)
		close_cpu(&s->cpu[i]);
	free(s->cpu);
	free(s->fds);
	free(s->tids);
	pr_merge_free(s);
	s->cpu = NULL;
	s->fds = NULL;
	s->tids = NULL;
	s->ntids = 0;
}

static int toggle(struct perfring_session *s, int fd, int cpu, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;

	if (pr_ioctl(fd, req, 0) < 0)
		return syscall_err(s, on ? "ioctl(PERF_EVENT_IOC_ENABLE)" :
				   "ioctl(PERF_EVENT_IOC_DISABLE)", "event", cpu, errno);
	return 0;
}

int pr_session_enable(struct perfring_session *s, bool on)
{
	size_t i, j;
	int err;

	for (i = 0; i < s->ncpu; i++) {
		if ((err = toggle(s, s->cpu[i].leader_fd, s->cpu[i].cpu, on)))
			return err;
		for (j = 0; j < s->cpu[i].nfds; j++)
			if ((err = toggle(s, s->cpu[i].fds[j], s->cpu[i].cpu, on)))
				return err;
	}
	return 0;
}
