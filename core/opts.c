/* SPDX-License-Identifier: MIT */
/* Validating perfring_opts and resolving the CPU set they name. */
#include "opts.h"
#include "kernel/cpulist.h"
#include "base/err.h"
#include "base/sys.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

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

int pr_opts_cpus(const struct perfring_opts *o, int **cpus, size_t *n)
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

int pr_opts_check(struct perfring_opts *o, size_t page, uint64_t *data_size)
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
