/* SPDX-License-Identifier: MIT */
/* What the benchmarks share: pinning, thread CPU time, medians, the report. */
#include "benchutil.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int bench_pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* CPU time of this thread, not wall time: on this shared 2-core machine
 * other jobs preempt us, and the time spent descheduled is not ours. */
uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------ report */

static FILE *out_mem;
static char *out_buf;
static size_t out_len;

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], *v;

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) || !(v = strchr(line, ':')))
			continue;
		v += strspn(v + 1, " \t") + 1;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
}

/* Quotes an argument only when the shell would split or expand it. */
static void out_arg(const char *a)
{
	const char *p;

	if (*a && !a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")]) {
		fputs(a, out_mem);
		return;
	}
	fputc('\'', out_mem);
	for (p = a; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", out_mem);
		else
			fputc(*p, out_mem);
	}
	fputc('\'', out_mem);
}

int bench_out_open(const char *title, int argc, char **argv)
{
	char date[64] = "unknown", model[256];
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	int i;

	out_mem = open_memstream(&out_buf, &out_len);
	if (!out_mem)
		return -errno;
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	cpu_model(model, sizeof(model));
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	fprintf(out_mem, "## %s\n\n- date: %s\n- kernel: %s\n- CPU: %s (%ld online)\n"
		"- command: `", title, date, u.release, model, sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < argc; i++) {
		if (i)
			fputc(' ', out_mem);
		out_arg(argv[i]);
	}
	fputs("`\n\n", out_mem);
	return 0;
}

void bench_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(out_mem, fmt, ap);
	va_end(ap);
}

static int append_results(const char *path)
{
	FILE *f = fopen(path, "a");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(out_buf, 1, out_len, f) != out_len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int bench_out_close(void)
{
	const char *path = getenv("PERFRING_RESULTS");
	int err = 0;

	fputc('\n', out_mem);
	if (fclose(out_mem))
		return -errno;
	out_mem = NULL;
	fwrite(out_buf, 1, out_len, stdout);
	fflush(stdout);
	if (path && *path && (err = append_results(path)))
		fprintf(stderr, "appending to %s: %s\n", path, strerror(-err));
	free(out_buf);
	out_buf = NULL;
	out_len = 0;
	return err;
}
