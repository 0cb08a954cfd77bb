/* SPDX-License-Identifier: MIT */
/* Validating perfring_opts and resolving the CPU set they name. */
#include "opts.h"
#include "kernel/cpulist.h"
#include "kernel/sysfs.h"
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
#define MAX_RING_PAGES (1u << 22)
#define DEFAULT_MAX_ORDER 10

static int online_cpus(int **cpus, size_t *n)
{
	return pr_sysfs_cpus(NULL, "online", cpus, n);
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

int pr_opts_window(struct pr_errbuf *e, const char *where, uint64_t ns)
{
	if (ns > PR_ORDER_WINDOW_MAX_NS)
		return pr_err(e, -EINVAL, "%s.order_window_ns = %llu ns is above the limit of "
			      "%llu ns (%u s): a record is held back at most that long",
			      where, (unsigned long long)ns,
			      (unsigned long long)PR_ORDER_WINDOW_MAX_NS,
			      (unsigned)(PR_ORDER_WINDOW_MAX_NS / 1000000000ull));
	return 0;
}

/* The page allocator's largest order: /proc/buddyinfo has a column for
 * each order, 0 to the largest. 0 or -errno. */
static int max_page_order(int *order)
{
	char *text = NULL, *p, *end;
	int cols = 0, err;

	*order = DEFAULT_MAX_ORDER;
	err = pr_read_file("/proc/buddyinfo", 1 << 16, &text, NULL);
	if (err == -ENOENT)
		return 0;
	if (err)
		return pr_err(NULL, err, "reading /proc/buddyinfo, for the largest ring the kernel "
			      "maps: %s", perfring_strerror(err));
	if ((p = strchr(text, '\n')))
		*p = '\0';
	/* "Node 0, zone   Normal   2533    673 ...": the counts after the name. */
	p = strstr(text, "zone");
	for (p = p ? p + 4 : NULL; p && *p == ' '; p++)
		;
	for (p = p ? strchr(p, ' ') : NULL; p && *p; p = end, cols++) {
		strtoul(p, &end, 10);
		if (end == p)
			break;
	}
	free(text);
	if (cols > 1)
		*order = cols - 1;
	return 0;
}

/* The largest ring the kernel maps (R10, docs/RULES.md). rb_alloc() in the
 * kernel's kernel/events/ring_buffer.c keeps a pointer (8 bytes) per data
 * page after a header, in one allocation of at most PAGE_SIZE << max order;
 * a table of 2^k pointers plus the header takes 2^(k + 4) bytes. (Kernels
 * built with CONFIG_PERF_USE_VMALLOC allow more; this limit is below it.)
 * Rings of up to 2^(shift + 3) pages fit under any max order from 7 up, so
 * only larger ones read /proc. */
static int kernel_max_ring_pages(size_t page, uint32_t want, uint32_t *max)
{
	int shift = 0, order, k, err;

	while (((size_t)1 << shift) < page)
		shift++;
	*max = MAX_RING_PAGES;
	if (shift + 3 < 22 && want <= 1u << (shift + 3))
		return 0;
	if ((err = max_page_order(&order)))
		return err;
	k = shift + order - 4;
	if (k < 22)
		*max = k < 0 ? 1 : 1u << k;
	return 0;
}

static int check_ring(struct perfring_opts *o, size_t page, uint64_t *data_size)
{
	uint32_t max;
	int err;

	if (!o->ring_pages)
		o->ring_pages = DEFAULT_RING_PAGES;
	if (o->ring_pages & (o->ring_pages - 1))
		return pr_err(NULL, -EINVAL, "opts.ring_pages = %u is not a power of two",
			      o->ring_pages);
	if ((err = kernel_max_ring_pages(page, o->ring_pages, &max)))
		return err;
	if (o->ring_pages > max)
		return pr_err(NULL, -EINVAL, "opts.ring_pages = %u is above the largest ring this "
			      "kernel maps: at most %u pages (%llu MiB per CPU)", o->ring_pages, max,
			      (unsigned long long)max * page >> 20);
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

/* An overwrite ring wakes no one and is read only by snapshots, so the
 * options of waking and waiting have nothing to act on. */
static int check_overwrite(const struct perfring_opts *o)
{
	const char *name = o->wakeup_watermark ? "wakeup_watermark" :
			   o->wakeup_events ? "wakeup_events" : o->flush_ms ? "flush_ms" :
			   o->poll_interval_ms ? "poll_interval_ms" :
			   o->order_window_ns ? "order_window_ns" : NULL;

	if (!o->overwrite || !name)
		return 0;
	return pr_err(NULL, -EINVAL, "opts.%s has no meaning with opts.overwrite: an overwrite "
		      "ring wakes no one and is read only by perfring_session_snapshot(); leave "
		      "it 0", name);
}

/* Hotplug follows every possible CPU; a recorder is read only by
 * snapshots, never where changes are made. */
static int check_follow(const struct perfring_opts *o)
{
	if (!o->follow_hotplug)
		return 0;
	if (o->cpus)
		return pr_err(NULL, -EINVAL, "opts.follow_hotplug needs opts.cpus NULL: a chosen "
			      "list of CPUs is not followed");
	if (o->overwrite)
		return pr_err(NULL, -EINVAL, "opts.follow_hotplug and opts.overwrite exclude each "
			      "other: a flight recorder's rings are read only by snapshots");
	return 0;
}

int pr_opts_check(struct perfring_opts *o, size_t page, uint64_t *data_size)
{
	int err;

	if ((err = check_overwrite(o)) || (err = check_follow(o)))
		return err;

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
	    (err = check_interval(o->flush_ms, "flush_ms", true)) ||
	    (err = pr_opts_window(NULL, "opts", o->order_window_ns)))
		return err;
	if (!o->poll_interval_ms)
		o->poll_interval_ms = DEFAULT_POLL_MS;
	if (!o->flush_ms)
		o->flush_ms = DEFAULT_FLUSH_MS;
	return 0;
}
