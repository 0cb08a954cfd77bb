/* SPDX-License-Identifier: MIT */
/* Error sentences and the fixes they suggest; perfring_strerror. */
#include "base/err.h"
#include "base/sys.h"

#include <perfring/perfring.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void add_fd_hint(char *buf, int err);

/* Two threads may fail on one session at once (R1's -EBUSY, in each of two
 * parsers): each makes its sentence on its own, and only the copy into the
 * session's buffer takes its turn. */
static void errbuf_set(struct pr_errbuf *e, const char *msg)
{
	while (__atomic_exchange_n(&e->busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	memcpy(e->msg, msg, PR_ERR_LEN);
	__atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE);
}

int pr_err(struct pr_errbuf *e, int err, const char *fmt, ...)
{
	char buf[PR_ERR_LEN];
	va_list ap;

	/* Formatted aside first: an argument may be thread_err itself. */
	va_start(ap, fmt);
	vsnprintf(buf, PR_ERR_LEN, fmt, ap);
	va_end(ap);
	add_fd_hint(buf, err);
	memcpy(thread_err, buf, PR_ERR_LEN);
	if (e)
		errbuf_set(e, buf);
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
	/* Only now: src + dst_sz on a NULL src is undefined (R9,
	 * docs/RULES.md). */
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

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define MAX_RATE "/proc/sys/kernel/perf_event_max_sample_rate"

static void hint_perm(char *buf, size_t len)
{
	snprintf(buf, len, "; run as root, grant CAP_PERFMON, or lower " PARANOID " (now %ld)",
		 read_proc_long(PARANOID));
}

/* mmap's EPERM: the kernel refuses a ring past the locked-memory limits. */
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

/* mmap's ENOMEM is never the mlock limit (that one is EPERM): the address
 * space or the memory itself ran out (R10). */
static void hint_nomem(char *buf, size_t len)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	getrlimit(RLIMIT_AS, &rl);
	if (rl.rlim_cur != RLIM_INFINITY)
		snprintf(buf, len, "; the ring does not fit in the address space: use fewer "
			 "ring_pages or raise RLIMIT_AS (ulimit -v, now %llu KiB)",
			 (unsigned long long)rl.rlim_cur / 1024);
	else
		snprintf(buf, len, "; the kernel is short of memory for the ring: use fewer "
			 "ring_pages or watch fewer CPUs");
}

/* EMFILE and ENFILE are two limits: the process's and the system's. */
static void hint_fds(char *buf, size_t len, int err)
{
	struct rlimit rl = { 0, 0 };
	char now[24] = "unlimited";

	if (err == ENFILE) {
		snprintf(buf, len, "; the system's file table is full (/proc/sys/fs/file-max, "
			 "now %ld)", read_proc_long("/proc/sys/fs/file-max"));
		return;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur != RLIM_INFINITY)
		snprintf(now, sizeof(now), "%llu", (unsigned long long)rl.rlim_cur);
	snprintf(buf, len, "; out of file descriptors: raise RLIMIT_NOFILE (ulimit -n, now %s) "
		 "or watch fewer CPUs or events", now);
}

/* Every sentence of an EMFILE or ENFILE, from any call, names its limit
 * (R10); a long sentence is cut to make room for it. */
static void add_fd_hint(char *buf, int err)
{
	char hint[160];
	size_t n = strlen(buf), h;

	if ((err != -EMFILE && err != -ENFILE) || strstr(buf, "RLIMIT_NOFILE") ||
	    strstr(buf, "file-max"))
		return;
	hint_fds(hint, sizeof(hint), -err);
	h = strlen(hint);
	if (n + h >= PR_ERR_LEN)
		n = PR_ERR_LEN - 1 - h;
	memcpy(buf + n, hint, h + 1);
}

void pr_err_hint(char *buf, size_t len, int err, const char *syscall_name)
{
	bool is_mmap = strcmp(syscall_name, "mmap") == 0;

	buf[0] = '\0';
	if (err == EACCES || (err == EPERM && !is_mmap))
		hint_perm(buf, len);
	else if (is_mmap && err == EPERM)
		hint_memlock(buf, len);
	else if (is_mmap && err == ENOMEM)
		hint_nomem(buf, len);
	else if (err == EMFILE || err == ENFILE)
		hint_fds(buf, len, err);
	else if (err == ENODEV)
		snprintf(buf, len, "; the CPU is offline (see /sys/devices/system/cpu/online)");
	else if (err == ENOENT && strcmp(syscall_name, "perf_event_open") == 0)
		snprintf(buf, len, "; this kernel or machine has no such event "
				   "(hardware events need a PMU)");
}

/* The owner of /proc/PID when it is not this process's effective user. */
static bool other_owner(int pid, unsigned *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) < 0 || st.st_uid == geteuid())
		return false;
	*uid = (unsigned)st.st_uid;
	return true;
}

/* The kernel's order of checks: kernel samples (paranoid >= 2 refuses them
 * to the unprivileged), then ptrace access to the process, then tracepoint
 * data (raw data needs paranoid -1, syscall tracepoints of a process aside). */
static void hint_open_perm(char *buf, size_t len, const struct perf_event_attr *a,
			   const char *what, int pid)
{
	long paranoid = read_proc_long(PARANOID);
	bool kernel = !a->exclude_kernel && paranoid >= 2;
	/* A process's syscall tracepoints are open to paranoid 1; other
	 * tracepoints' data (ftrace:function too) needs -1. */
	const char *to = strncmp(what, "syscalls:", 9) == 0 ? "1" : "-1";
	unsigned uid;
	int n;

	if (pid > 0 && other_owner(pid, &uid)) {
		n = snprintf(buf, len, "; process %d belongs to uid %u: watching another user's "
			     "process needs the same uid (and a dumpable process) or "
			     "CAP_SYS_PTRACE", pid, uid);
		if (kernel && n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, ", and with perf_event_paranoid %ld "
				 "also exclude_kernel", paranoid);
	} else if (pid > 0 && kernel && a->type == PERF_TYPE_TRACEPOINT) {
		snprintf(buf, len, "; perf_event_paranoid is %ld, so without CAP_PERFMON only "
			 "user space can be watched, and a tracepoint fires in the kernel: run "
			 "as root, grant CAP_PERFMON, or lower " PARANOID " to %s", paranoid, to);
	} else if (pid > 0 && kernel) {
		snprintf(buf, len, "; perf_event_paranoid is %ld: without CAP_PERFMON a "
			 "process's kernel samples are refused: set exclude_kernel "
			 "(perfring_software_opts.exclude_kernel or attr.exclude_kernel), grant "
			 "CAP_PERFMON, or lower " PARANOID " to 1", paranoid);
	} else if (pid > 0 && a->type == PERF_TYPE_TRACEPOINT) {
		snprintf(buf, len, "; this tracepoint's data needs root, CAP_PERFMON or "
			 PARANOID " %s (now %ld)", to, paranoid);
	} else if (pid <= 0) {
		snprintf(buf, len, "; watching every task needs: run as root, grant CAP_PERFMON, "
			 "or lower " PARANOID " (now %ld) to 0; or watch a process of your own "
			 "(opts.pid)", paranoid);
	} else {
		hint_perm(buf, len);
	}
}

static void exclude_bits(const struct perf_event_attr *a, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *name; } *p, bits[] = {
		{ 0, "exclude_user" }, { 1, "exclude_kernel" }, { 2, "exclude_hv" },
		{ 3, "exclude_idle" }, { 4, "exclude_host" }, { 5, "exclude_guest" },
		{ 6, "exclude_callchain_kernel" }, { 7, "exclude_callchain_user" },
	};
	unsigned set = (unsigned)a->exclude_user | (unsigned)a->exclude_kernel << 1 |
		       (unsigned)a->exclude_hv << 2 | (unsigned)a->exclude_idle << 3 |
		       (unsigned)a->exclude_host << 4 | (unsigned)a->exclude_guest << 5 |
		       (unsigned)a->exclude_callchain_kernel << 6 |
		       (unsigned)a->exclude_callchain_user << 7;
	size_t n = 0;

	snprintf(buf, len, "none");
	for (p = bits; p < bits + sizeof(bits) / sizeof(bits[0]) && n < len; p++)
		if (set & (1u << p->bit))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", p->name);
}

/* A bare EINVAL: the field that is wrong when it can be told, else the
 * fields the kernel commonly refuses (R10). */
static void hint_open_inval(char *buf, size_t len, const struct perf_event_attr *a,
			    const char *what)
{
	long max = read_proc_long(MAX_RATE);
	char ex[128];

	if (a->freq && max >= 0 && a->sample_freq > (unsigned long long)max) {
		snprintf(buf, len, "; sample_freq %llu Hz is above " MAX_RATE " (%ld): ask for "
			 "%ld Hz or less", (unsigned long long)a->sample_freq, max, max);
	} else if (a->write_backward) {
		snprintf(buf, len, "; write_backward: the session's rings are written forward "
			 "and a backward event cannot share them: clear attr.write_backward");
	} else if (what && strcmp(what, "ftrace:function") == 0 && !a->exclude_callchain_user) {
		snprintf(buf, len, "; ftrace:function samples cannot carry user callchains: "
			 "add it with perfring_session_add_attr and attr.exclude_callchain_user");
	} else {
		exclude_bits(a, ex, sizeof(ex));
		snprintf(buf, len, "; the kernel refuses a sample_freq above " MAX_RATE " (%ld; "
			 "this event: %s %llu), write_backward, and exclude_* bits an event "
			 "cannot honour (set here: %s)", max, a->freq ? "freq" : "period",
			 (unsigned long long)a->sample_period, ex);
	}
}

void pr_err_hint_attr(char *buf, size_t len, int err, const char *call,
		      const struct perf_event_attr *a, const char *what, int pid)
{
	bool open = strcmp(call, "perf_event_open") == 0;

	buf[0] = '\0';
	if (open && (err == EACCES || err == EPERM))
		hint_open_perm(buf, len, a, what ? what : "", pid);
	else if (err == EINVAL && (open || a->write_backward))
		hint_open_inval(buf, len, a, what);
	else
		pr_err_hint(buf, len, err, call);
}
