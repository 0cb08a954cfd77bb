/* SPDX-License-Identifier: MIT */
/* Error sentences and the fixes they suggest; perfring_strerror. */
#include "base/err.h"
#include "base/sys.h"

#include <perfring/perfring.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static _Thread_local char thread_err[PR_ERR_LEN];

PERFRING_API int perfring_version(void)
{
	return PERFRING_VERSION;
}

PERFRING_API const char *perfring_strerror(int err)
{
	const char *d;

	if (err == 0)
		return "Success";
	if (err == INT_MIN)
		return "Unknown error";
	d = strerrordesc_np(err < 0 ? -err : err);
	return d ? d : "Unknown error";
}

int pr_err(struct pr_errbuf *e, int err, const char *fmt, ...)
{
	char *buf = e ? e->msg : thread_err;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, PR_ERR_LEN, fmt, ap);
	va_end(ap);
	if (e)
		memcpy(thread_err, buf, PR_ERR_LEN);
	return err;
}

void pr_reason(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

const char *pr_err_thread(void)
{
	return thread_err;
}

int pr_null(struct pr_errbuf *e, const char *fn, const char *arg)
{
	return pr_err(e, -EINVAL, "%s: %s must not be NULL", fn, arg);
}

int pr_opts_copy(struct pr_errbuf *e, const char *name, void *dst, size_t dst_sz,
		 size_t min_sz, const void *src)
{
	const unsigned char *tail;
	size_t sz, i;

	memset(dst, 0, dst_sz);
	if (!src)
		return 0;
	/* Only now: src + dst_sz on a NULL src is undefined (R9). */
	tail = (const unsigned char *)src + dst_sz;
	sz = *(const size_t *)src;
	/* A caller built against an older header passes a smaller struct: its
	 * fields are copied and the newer ones stay zero, their defaults. */
	if (sz < min_sz || (sz < dst_sz && sz % 8))
		return pr_err(e, -EINVAL, "%s.sz is %zu; the struct is %zu bytes (set sz = "
			      "sizeof(struct %s))", name, sz, dst_sz, name);
	if (sz < dst_sz) {
		memcpy(dst, src, sz);
		*(size_t *)dst = dst_sz;
		return 0;
	}
	for (i = 0; i < sz - dst_sz; i++)
		if (tail[i])
			return pr_err(e, -E2BIG, "%s.sz is %zu and its bytes past %zu are not zero: "
				      "a newer libperfring's option is set", name, sz, dst_sz);
	memcpy(dst, src, dst_sz);
	return 0;
}

/* A one-line procfs integer, or -1. */
static long read_proc_long(const char *path)
{
	char *text = NULL;
	long v = -1;

	if (pr_read_file(path, 64, &text, NULL) == 0) {
		v = strtol(text, NULL, 10);
		free(text);
	}
	return v;
}

static void hint_perm(char *buf, size_t len)
{
	snprintf(buf, len,
		 "; run as root, grant CAP_PERFMON, or lower "
		 "/proc/sys/kernel/perf_event_paranoid (now %ld)",
		 read_proc_long("/proc/sys/kernel/perf_event_paranoid"));
}

static void hint_memlock(char *buf, size_t len)
{
	struct rlimit rl = { 0, 0 };

	getrlimit(RLIMIT_MEMLOCK, &rl);
	snprintf(buf, len,
		 "; the rings exceed the locked-memory limit: use fewer ring_pages, raise "
		 "RLIMIT_MEMLOCK (ulimit -l, now %llu KiB) or "
		 "/proc/sys/kernel/perf_event_mlock_kb (now %ld)",
		 rl.rlim_cur == RLIM_INFINITY ? 0ull : (unsigned long long)rl.rlim_cur / 1024,
		 read_proc_long("/proc/sys/kernel/perf_event_mlock_kb"));
}

static void hint_nofile(char *buf, size_t len)
{
	struct rlimit rl = { 0, 0 };

	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(buf, len,
		 "; out of file descriptors: raise RLIMIT_NOFILE (ulimit -n, now %llu) "
		 "or watch fewer CPUs or events",
		 (unsigned long long)rl.rlim_cur);
}

void pr_err_hint(char *buf, size_t len, int err, const char *syscall_name)
{
	bool is_mmap = strcmp(syscall_name, "mmap") == 0;

	buf[0] = '\0';
	if (err == EACCES || (err == EPERM && !is_mmap))
		hint_perm(buf, len);
	else if (is_mmap && (err == EPERM || err == ENOMEM))
		hint_memlock(buf, len);
	else if (err == EMFILE || err == ENFILE)
		hint_nofile(buf, len);
	else if (err == ENODEV)
		snprintf(buf, len, "; the CPU is offline (see /sys/devices/system/cpu/online)");
	else if (err == ENOENT && strcmp(syscall_name, "perf_event_open") == 0)
		snprintf(buf, len, "; this kernel or machine has no such event "
				   "(hardware events need a PMU)");
}
