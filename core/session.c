/* SPDX-License-Identifier: MIT */
#include "session.h"
#include "cpulist.h"
#include "event.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RING_PAGES 64u
#define DEFAULT_POLL_MS 15u
#define DEFAULT_FLUSH_MS 100u
#define MAX_INTERVAL_MS 3600000u

static int online_cpus(int **cpus, size_t *n)
{
	char *text;
	size_t len;
	int err = pr_read_file("/sys/devices/system/cpu/online", 4096, &text, &len);

	if (err)
		return pr_err(NULL, err, "reading /sys/devices/system/cpu/online: %s",
			      perfring_strerror(err));
	err = pr_cpulist_parse(text, len, cpus, n);
	free(text);
	if (err)
		return pr_err(NULL, err, "parsing /sys/devices/system/cpu/online: %s",
			      perfring_strerror(err));
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Copies and sorts the caller's list, checking each CPU is online. */
static int chosen_cpus(const struct perfring_opts *o, const int *online, size_t nonline,
		       int **out)
{
	int *c = pr_malloc(o->cpu_cnt * sizeof(*c));
	size_t i;
	int err = 0;

	if (!c)
		return pr_err(NULL, -ENOMEM, "out of memory copying opts.cpus");
	for (i = 0; i < o->cpu_cnt; i++) {
		if (o->cpus[i] < 0 || o->cpus[i] >= PR_CPU_MAX) {
			free(c);
			return pr_err(NULL, -EINVAL, "opts.cpus[%zu] = %d is not a valid CPU number",
				      i, o->cpus[i]);
		}
	}
	memcpy(c, o->cpus, o->cpu_cnt * sizeof(*c));
	qsort(c, o->cpu_cnt, sizeof(*c), cmp_int);
	for (i = 0; i < o->cpu_cnt; i++) {
		if (i && c[i] == c[i - 1])
			err = pr_err(NULL, -EINVAL, "opts.cpus lists CPU %d twice", c[i]);
		else if (!pr_cpulist_has(online, nonline, c[i]))
			err = pr_err(NULL, -ENODEV, "opts.cpus: CPU %d is offline or absent (online: "
				     "see /sys/devices/system/cpu/online)", c[i]);
		if (err) {
			free(c);
			return err;
		}
	}
	*out = c;
	return 0;
}

static int resolve_cpus(const struct perfring_opts *o, int **cpus, size_t *n)
{
	int *online = NULL;
	size_t nonline = 0;
	int err;

	if (!o->cpus != !o->cpu_cnt)
		return pr_err(NULL, -EINVAL, "opts.cpus and opts.cpu_cnt disagree (%s, %zu)",
			      o->cpus ? "set" : "NULL", o->cpu_cnt);
	err = online_cpus(&online, &nonline);
	if (err)
		return err;
	if (!o->cpus) {
		*cpus = online;
		*n = nonline;
		return nonline ? 0 : pr_err(NULL, -ENODEV, "no online CPUs");
	}
	err = chosen_cpus(o, online, nonline, cpus);
	free(online);
	*n = o->cpu_cnt;
	return err;
}

static int check_interval(uint32_t v, const char *name, bool never_ok)
{
	if (v > MAX_INTERVAL_MS && !(never_ok && v == PERFRING_FLUSH_NEVER))
		return pr_err(NULL, -EINVAL, "opts.%s = %u ms is above the limit of %u ms", name, v,
			      MAX_INTERVAL_MS);
	return 0;
}

static int check_ring(struct perfring_opts *o, size_t page, uint64_t *data_size)
{
	if (!o->ring_pages)
		o->ring_pages = DEFAULT_RING_PAGES;
	if (o->ring_pages & (o->ring_pages - 1))
		return pr_err(NULL, -EINVAL, "opts.ring_pages = %u is not a power of two",
			      o->ring_pages);
	if (o->ring_pages > (1u << 22))
		return pr_err(NULL, -EINVAL, "opts.ring_pages = %u is above the limit of %u",
			      o->ring_pages, 1u << 22);
	*data_size = (uint64_t)o->ring_pages * page;
	if (o->wakeup_watermark && o->wakeup_events)
		return pr_err(NULL, -EINVAL, "opts.wakeup_watermark (%u) and opts.wakeup_events "
			      "(%u) exclude each other; set one", o->wakeup_watermark,
			      o->wakeup_events);
	if (o->wakeup_watermark >= *data_size)
		return pr_err(NULL, -EINVAL, "opts.wakeup_watermark = %u bytes must be smaller than "
			      "the ring's data size, %llu bytes (%u pages)", o->wakeup_watermark,
			      (unsigned long long)*data_size, o->ring_pages);
	return 0;
}

static int check_opts(struct perfring_opts *o, size_t page, uint64_t *data_size)
{
	int err;

	if (o->pid < 0)
		return pr_err(NULL, -EINVAL, "opts.pid = %d: use 0 for every task or a process id",
			      o->pid);
	if (o->enable_on_exec && o->pid <= 0)
		return pr_err(NULL, -EINVAL, "opts.enable_on_exec needs opts.pid: only a process "
			      "execs");
	if (o->pid > 0 && kill(o->pid, 0) < 0 && errno == ESRCH)
		return pr_err(NULL, -ESRCH, "opts.pid = %d: no such process", o->pid);
	if ((err = check_ring(o, page, data_size)))
		return err;
	if ((err = check_interval(o->poll_interval_ms, "poll_interval_ms", false)) ||
	    (err = check_interval(o->flush_ms, "flush_ms", true)))
		return err;
	if (!o->poll_interval_ms)
		o->poll_interval_ms = DEFAULT_POLL_MS;
	if (!o->flush_ms)
		o->flush_ms = DEFAULT_FLUSH_MS;
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
	s->epfd = -1;
	s->tfd = -1;
	if (!opts)
		s->o.sz = sizeof(s->o);
	s->page_size = (size_t)sysconf(_SC_PAGESIZE);
	if ((err = pr_opts_copy(NULL, "perfring_opts", &s->o, sizeof(s->o), opts)) ||
	    (err = check_opts(&s->o, s->page_size, &s->data_size)) ||
	    (err = resolve_cpus(&s->o, &s->cpus, &s->ncpu))) {
		free(s);
		return err;
	}
	s->o.cpus = NULL;
	s->o.cpu_cnt = s->ncpu;
	*out = s;
	return 0;
}

PERFRING_API void perfring_session_free(struct perfring_session *s)
{
	size_t i;

	if (!s)
		return;
	pr_session_close(s);
	for (i = 0; i < s->nevents; i++)
		pr_event_free(s->events[i]);
	free(s->events);
	free(s->cpus);
	free(s);
}

int pr_cpu_index(const struct perfring_session *s, int cpu)
{
	size_t lo = 0, hi = s->ncpu, mid;

	if (!s->cpu)
		return -1;
	/* CPUs are usually 0..n-1: try the direct slot first. */
	if (cpu >= 0 && (size_t)cpu < s->ncpu && s->cpu[cpu].cpu == cpu)
		return cpu;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->cpu[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->ncpu && s->cpu[lo].cpu == cpu ? (int)lo : -1;
}

PERFRING_API size_t perfring_session_fds(const struct perfring_session *s,
					 const struct perfring_cpu_fd **out)
{
	if (out)
		*out = s ? s->fds : NULL;
	return s && s->fds ? s->ncpu : 0;
}

PERFRING_API int perfring_session_fd_for_cpu(const struct perfring_session *s, int cpu)
{
	int i;

	if (!s)
		return pr_null(NULL, __func__, "s");
	i = pr_cpu_index(s, cpu);
	return i < 0 ? -ENOENT : s->cpu[i].leader_fd;
}

PERFRING_API int perfring_session_cpu_stats(const struct perfring_session *s, int cpu,
					    struct perfring_cpu_stats *out)
{
	int i;

	if (!s || !out)
		return pr_null((struct perfring_session *)s, __func__, s ? "out" : "s");
	i = pr_cpu_index(s, cpu);
	if (i < 0)
		return pr_err((struct perfring_session *)s, -ENOENT,
			      "cpu_stats: CPU %d is not watched by this session", cpu);
	*out = s->cpu[i].st;
	return 0;
}

PERFRING_API int perfring_session_start(struct perfring_session *s)
{
	int err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state != PR_NEW)
		return pr_err(s, -EBUSY, "perfring_session_start: already started");
	if (!s->nevents && !s->rec_fn)
		return pr_err(s, -EINVAL, "perfring_session_start: no events added and no record "
			      "callback set");
	if ((err = pr_session_open(s)))
		return err;
	/* With enable_on_exec the kernel enables them at the process's execve. */
	if (!s->o.enable_on_exec && (err = pr_session_enable(s, true))) {
		pr_session_close(s);
		return err;
	}
	s->state = PR_STARTED;
	return 0;
}

PERFRING_API int perfring_session_stop(struct perfring_session *s)
{
	int err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->state != PR_STARTED)
		return pr_err(s, -EINVAL, "perfring_session_stop: the session is not running");
	if ((err = pr_session_enable(s, false)))
		return err;
	s->state = PR_STOPPED;
	return 0;
}
