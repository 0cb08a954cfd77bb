/* SPDX-License-Identifier: MIT */
#include "benchutil.h"
#include "event.h"
#include "parse.h"
#include "sys.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------- synthetic session */

static int alloc_rings(struct bench_session *b, size_t n, uint64_t ring_size)
{
	int err;

	b->rings = calloc(n, sizeof(*b->rings));
	if (!b->rings)
		return -ENOMEM;
	for (b->nrings = 0; b->nrings < n; b->nrings++)
		if ((err = synth_ring_init(&b->rings[b->nrings], ring_size)))
			return err;
	return 0;
}

/* Leader first: open.c keeps ids sorted and starts the lookup cache at [0]. */
static int attach_ring(struct bench_session *b, size_t i)
{
	struct pr_cpu *c = &b->s->cpu[i];
	struct synth_ring *sr = &b->rings[i];

	c->cpu = (int)i;
	c->ids = pr_calloc(2, sizeof(*c->ids));
	if (!c->ids)
		return -ENOMEM;
	c->ids[0] = (struct pr_idmap){ bench_leader_id(i), NULL };
	c->ids[1] = (struct pr_idmap){ bench_event_id(i), b->ev };
	c->nids = 2;
	c->last = c->ids[0];
	/* The ring's scratch is the synth ring's: c->scratch stays NULL so the
	 * session's close path does not free it. */
	return pr_ring_init(&c->ring, sr->meta, sr->data, sr->size, sr->scratch);
}

/* Replaces what pr_session_open() would build. Every pr_cpu must look
 * unopened to pr_session_close() before anything can fail: leader_fd -1
 * (calloc's 0 would close stdin), no map, no fds. */
static int attach_rings(struct bench_session *b)
{
	struct perfring_session *s = b->s;
	size_t i;
	int err;

	s->cpu = pr_calloc(b->nrings, sizeof(*s->cpu));
	if (!s->cpu)
		return -ENOMEM;
	for (i = 0; i < b->nrings; i++)
		s->cpu[i].leader_fd = -1;
	s->ncpu = b->nrings;
	s->o.cpu_cnt = b->nrings;
	for (i = 0; i < b->nrings; i++)
		if ((err = attach_ring(b, i)))
			return err;
	return pr_merge_init(s);
}

int bench_session_synthetic(struct bench_session *b, size_t nrings, uint64_t ring_size,
			    const struct perf_event_attr *attr, perfring_sample_fn fn, void *ctx)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	int err;

	memset(b, 0, sizeof(*b));
	if (!nrings || nrings > UINT32_MAX || !attr)
		return -EINVAL;
	if ((err = perfring_session_new(&o, &b->s)))
		return err;
	if ((err = perfring_session_add_attr(b->s, attr, &b->ev)) ||
	    (err = perfring_event_set_callback(b->ev, fn, ctx)) ||
	    (err = alloc_rings(b, nrings, ring_size)) || (err = attach_rings(b))) {
		bench_session_free(b);
		return err;
	}
	b->s->state = PR_STARTED;
	return 0;
}

void bench_session_free(struct bench_session *b)
{
	size_t i;

	/* The session goes first: its close path may still read the rings'
	 * pr_cpu entries, never the ring memory itself. */
	perfring_session_free(b->s);
	for (i = 0; i < b->nrings; i++)
		synth_ring_free(&b->rings[i]);
	free(b->rings);
	memset(b, 0, sizeof(*b));
}

void bench_session_rewind(struct bench_session *b)
{
	struct perfring_session *s = b->s;
	struct synth_ring *sr;
	struct pr_cpu *c;
	size_t i;

	for (i = 0; i < b->nrings; i++) {
		sr = &b->rings[i];
		c = &s->cpu[i];
		__atomic_store_n(&sr->meta->data_tail, 0, __ATOMIC_RELEASE);
		pr_ring_init(&c->ring, sr->meta, sr->data, sr->size, sr->scratch);
		memset(&c->st, 0, sizeof(c->st));
		c->last_time = 0;
		c->pulling = false;
	}
	s->last_merged_time = 0;
}

void bench_session_clear(struct bench_session *b)
{
	size_t i;

	for (i = 0; i < b->nrings; i++)
		synth_ring_set_pos(&b->rings[i], 0);
	bench_session_rewind(b);
}

uint64_t bench_sample_type(const struct bench_session *b)
{
	return b->ev->attr.sample_type;
}

size_t bench_template(const struct bench_session *b, size_t ring, struct synth_fields *f,
		      uint8_t *buf, size_t cap)
{
	f->identifier = bench_event_id(ring);
	f->id = bench_event_id(ring);
	f->cpu = (uint32_t)ring;
	return synth_sample(buf, cap, bench_sample_type(b), f);
}

/* perf_output_sample() order: IDENTIFIER, IP, TID, then TIME. */
size_t bench_time_offset(uint64_t st)
{
	uint64_t before = st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID);

	return sizeof(struct perf_event_header) + 8 * (size_t)__builtin_popcountll(before);
}

int bench_put(struct bench_session *b, size_t ring, uint8_t *rec, size_t len, size_t time_off,
	      uint64_t t)
{
	memcpy(rec + time_off, &t, sizeof(t));
	return synth_put(&b->rings[ring], rec, len);
}

uint64_t bench_pow2(uint64_t n)
{
	uint64_t p = 8;

	while (p < n)
		p <<= 1;
	return p;
}

/* ------------------------------------------------------------ timing */

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
