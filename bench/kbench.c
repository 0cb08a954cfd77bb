/* SPDX-License-Identifier: MIT */
#include "kbench.h"

#include <errno.h>
#include <poll.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

int kb_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* ---------------------------------------------------------- generator */

struct gen_start {
	struct kb_gen *g;
	pthread_barrier_t ready;
};

uint64_t kb_efd_read(int fd)
{
	uint64_t v = 0;

	while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	return v;
}

static void efd_post(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write of 1 cannot fail short of a bug */
}

static void tick_loop(struct kb_gen *g)
{
	uint64_t next = g->t0;
	long i;

	for (i = 0; i < g->n; i++) {
		for (next += g->tick_ns; kb_now_ns() < next;)
			syscall(SYS_getpid);
		efd_post(g->tick_fd);
	}
}

/* -p: one call every kb_pace_ns, spinning between them, so that the rate
 * (and with it how many records a reader finds per wakeup) is the same on
 * every host. */
static void paced_loop(struct kb_gen *g)
{
	uint64_t next = g->t0;

	for (long i = 0; i < g->n; i++) {
		syscall(SYS_getpid);
		for (next += kb_pace_ns; kb_now_ns() < next;)
			;
	}
}

static void gen_loop(struct kb_gen *g)
{
	long i, n = g->n;

	g->t0 = kb_now_ns();
	if (g->tick_ns)
		tick_loop(g);
	else if (kb_pace_ns)
		paced_loop(g);
	else
		for (i = 0; i < n; i++)
			syscall(SYS_getpid);
	g->t1 = kb_now_ns();
}

static void *gen_main(void *arg)
{
	struct gen_start *st = arg;
	struct kb_gen *g = st->g;

	g->tid = (pid_t)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), "kb-gen");
	if (kb_pin(KB_GEN_CPU))
		g->n = 0;
	pthread_barrier_wait(&st->ready);
	kb_efd_read(g->go_fd);
	gen_loop(g);
	/* Release: every record of the loop is in its ring before done reads true. */
	__atomic_store_n(&g->done, true, __ATOMIC_RELEASE);
	efd_post(g->done_fd);
	return NULL;
}

int kb_gen_start(struct kb_gen *g, long n)
{
	struct gen_start st = { .g = g };
	int err;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->go_fd = eventfd(0, EFD_CLOEXEC);
	g->done_fd = eventfd(0, EFD_CLOEXEC);
	if (g->go_fd < 0 || g->done_fd < 0) {
		err = errno;
		goto fail;
	}
	pthread_barrier_init(&st.ready, NULL, 2);
	err = pthread_create(&g->th, NULL, gen_main, &st);
	if (!err)
		pthread_barrier_wait(&st.ready);
	pthread_barrier_destroy(&st.ready);
	if (err)
		goto fail;
	if (g->n != n) {
		fprintf(stderr, "kbench: cannot pin the generator to CPU %d\n", KB_GEN_CPU);
		kb_gen_join(g);
		return -EINVAL;
	}
	return 0;
fail:
	if (g->go_fd >= 0)
		close(g->go_fd);
	if (g->done_fd >= 0)
		close(g->done_fd);
	g->joined = true;
	return -err;
}

void kb_gen_go(struct kb_gen *g)
{
	g->went = true;
	efd_post(g->go_fd);
}

bool kb_gen_done(const struct kb_gen *g)
{
	return __atomic_load_n(&g->done, __ATOMIC_ACQUIRE);
}

double kb_gen_join(struct kb_gen *g)
{
	if (!g->joined) {
		if (!g->went) {
			g->n = 0; /* never told to go: let it finish at once */
			kb_gen_go(g);
		}
		pthread_join(g->th, NULL);
		close(g->go_fd);
		close(g->done_fd);
		g->joined = true;
	}
	return g->t1 > g->t0 ? (double)g->n * 1e9 / (double)(g->t1 - g->t0) : 0.0;
}

/* ------------------------------------------------------------- tally */

int kb_tally_init(struct kb_tally *t, pid_t tid, long n)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->cap = (size_t)n / KB_LAT_STRIDE + 2;
	t->lat = malloc(t->cap * sizeof(*t->lat));
	return t->lat ? 0 : -ENOMEM;
}

void kb_tally_free(struct kb_tally *t)
{
	free(t->lat);
	t->lat = NULL;
}

int kb_tally_cb(const struct perfring_sample *s, void *ctx)
{
	kb_tally_sample(ctx, s->tid, s->time);
	return 0;
}

uint32_t kb_tid_offset(uint64_t st)
{
	uint32_t off = sizeof(struct perf_event_header);

	off += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	off += (st & PERF_SAMPLE_IP) ? 8 : 0;
	return off + 4; /* TID is { u32 pid, tid } */
}

uint32_t kb_time_offset(uint64_t st)
{
	return kb_tid_offset(st) - 4 + ((st & PERF_SAMPLE_TID) ? 8 : 0);
}

/* ----------------------------------------------------------- one run */

static void usage_now(struct kb_usage *u)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	u->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
	u->cpu_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		    (uint64_t)ru.ru_utime.tv_usec * 1000ull + u->sys_ns;
	u->nvcsw = (uint64_t)ru.ru_nvcsw;
	u->wall_ns = kb_now_ns();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double pct_us(const uint64_t *v, size_t n, unsigned pct)
{
	return n ? (double)v[(n - 1) * pct / 100] / 1000.0 : 0.0;
}

static void latency(struct kb_run *r, struct kb_tally *t)
{
	qsort(t->lat, t->nlat, sizeof(*t->lat), cmp_u64);
	r->p50_us = pct_us(t->lat, t->nlat, 50);
	r->p99_us = pct_us(t->lat, t->nlat, 99);
	r->max_us = pct_us(t->lat, t->nlat, 100);
}

void kb_run_start(struct kb_gen *g, struct kb_usage *u0)
{
	usage_now(u0);
	kb_gen_go(g);
}

void kb_run_finish(struct kb_run *r, struct kb_tally *t, const struct kb_usage *u0,
		   struct kb_gen *g)
{
	struct kb_usage u1;

	usage_now(&u1);
	memset(r, 0, sizeof(*r));
	r->records = t->own;
	r->foreign = t->foreign;
	r->lost = (uint64_t)g->n > t->own ? (uint64_t)g->n - t->own : 0;
	r->cpu_ns = u1.cpu_ns - u0->cpu_ns;
	r->sys_ns = u1.sys_ns - u0->sys_ns;
	r->nvcsw = u1.nvcsw - u0->nvcsw;
	r->wall_ns = u1.wall_ns - u0->wall_ns;
	r->gen_rate = kb_gen_join(g);
	latency(r, t);
}

int kb_bpf_map_fd = -1;

int kb_lpr_session(const struct perfring_opts *o, pid_t tid, struct kb_tally *t,
		   struct perfring_session **out)
{
	struct perfring_event *ev;
	char filter[64];
	int err;

	if ((err = perfring_session_new(o, out)))
		return err;
	if (kb_bpf_map_fd >= 0) {
		if ((err = perfring_session_add_bpf_output(*out, kb_bpf_map_fd, &ev)))
			return err;
		return perfring_event_set_callback(ev, kb_tally_cb, t);
	}
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)tid);
	if ((err = perfring_session_add_tracepoint(*out, "syscalls", "sys_enter_getpid", &ev)) ||
	    (err = perfring_event_set_filter(ev, filter)) ||
	    (err = perfring_event_set_callback(ev, kb_tally_cb, t)))
		return err;
	return 0;
}

struct lpr_stop {
	const struct kb_gen *g;
	const struct kb_tally *t;
	uint64_t n;
	uint64_t window;   /* the session's order window */
};

static bool lpr_should_stop(void *ctx)
{
	const struct lpr_stop *st = ctx;

	return st->t->own >= st->n || kb_gen_done(st->g);
}

static int lpr_consume(struct perfring_session *s, const struct lpr_stop *st)
{
	int err = perfring_session_parse_until(s, lpr_should_stop, (void *)st);

	/* The generator is done: what it wrote is in the rings now (and with
	 * a window, the stop lets the parse take what the window kept). */
	if (err >= 0 && st->window)
		err = perfring_session_stop(s);
	if (err >= 0)
		err = perfring_session_parse_all(s);
	return err < 0 ? err : 0;
}

/* Overwrite rings: nothing is read until the generator is done, then one
 * snapshot takes the newest ring's worth of each CPU. */
static int ovw_consume(struct perfring_session *s, const struct lpr_stop *st, double *ms,
		       double *mib)
{
	struct pollfd p = { .fd = st->g->done_fd, .events = POLLIN };
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats cs;
	size_t i, nfd = perfring_session_fds(s, &fds);
	uint64_t t0, bytes = 0;
	int n;

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	t0 = kb_now_ns();
	if ((n = perfring_session_snapshot(s)) < 0)
		return n;
	*ms = (double)(kb_now_ns() - t0) / 1e6;
	for (i = 0; i < nfd; i++)
		if (!perfring_session_cpu_stats(s, fds[i].cpu, &cs))
			bytes += cs.bytes;
	*mib = (double)bytes / (1 << 20);
	return 0;
}

static int run_session(const struct perfring_opts *o, long n, struct kb_run *r)
{
	double ms = 0, mib = 0;
	struct perfring_session *s = NULL;
	struct kb_usage u0;
	struct kb_tally t;
	struct kb_gen g;
	struct lpr_stop st = { &g, &t, (uint64_t)n, o->order_window_ns };
	int err;

	if ((err = kb_gen_start(&g, n)))
		return err;
	if ((err = kb_tally_init(&t, g.tid, n)) || (err = kb_lpr_session(o, g.tid, &t, &s)) ||
	    (err = perfring_session_start(s))) {
		fprintf(stderr, "kbench: %s\n", perfring_session_last_error(s));
		kb_gen_join(&g);
		goto out;
	}
	kb_run_start(&g, &u0);
	err = o->overwrite ? ovw_consume(s, &st, &ms, &mib) : lpr_consume(s, &st);
	kb_run_finish(r, &t, &u0, &g);
	r->snap_ms = ms;
	r->snap_mib = mib;
out:
	perfring_session_free(s);
	kb_tally_free(&t);
	return err;
}

int kb_run_lpr(const struct kb_lpr_cfg *c, long n, struct kb_run *r)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = c->pages,
				   .wakeup_watermark = c->watermark,
				   .wakeup_events = c->wakeup_events, .flush_ms = c->flush_ms,
				   .order_window_ns = c->order_window_ns };

	return run_session(&o, n, r);
}

int kb_run_overwrite(uint32_t pages, long n, struct kb_run *r)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = pages, .overwrite = 1 };

	return run_session(&o, n, r);
}

int kb_run_untraced(long n, struct kb_run *r)
{
	struct kb_usage u0;
	struct kb_tally t;
	struct kb_gen g;
	int err;

	if ((err = kb_gen_start(&g, n)))
		return err;
	if ((err = kb_tally_init(&t, g.tid, 0))) {
		kb_gen_join(&g);
		return err;
	}
	kb_run_start(&g, &u0);
	kb_efd_read(g.done_fd);
	kb_run_finish(r, &t, &u0, &g);
	kb_tally_free(&t);
	return 0;
}

/* ----------------------------------------------------------- summary */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double kb_median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double kb_median_run(const struct kb_run *runs, size_t n, double (*get)(const struct kb_run *))
{
	double v[64];
	size_t i;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		v[i] = get(&runs[i]);
	return kb_median(v, n);
}

static double per_k(uint64_t x, uint64_t records)
{
	return records ? (double)x * 1000.0 / (double)records : 0.0;
}

double kb_get_cpu_per_k(const struct kb_run *r)
{
	return per_k(r->cpu_ns, r->records) / 1000.0; /* µs */
}

double kb_get_wakeups_per_k(const struct kb_run *r)
{
	return per_k(r->nvcsw, r->records);
}

double kb_get_cpu_per_wakeup(const struct kb_run *r)
{
	return r->nvcsw ? (double)r->cpu_ns / 1000.0 / (double)r->nvcsw : 0.0;
}

double kb_get_lost(const struct kb_run *r)
{
	return (double)r->lost;
}

double kb_get_foreign(const struct kb_run *r)
{
	return (double)r->foreign;
}

double kb_get_p50(const struct kb_run *r)
{
	return r->p50_us;
}

double kb_get_p99(const struct kb_run *r)
{
	return r->p99_us;
}

double kb_get_max(const struct kb_run *r)
{
	return r->max_us;
}

double kb_get_rate(const struct kb_run *r)
{
	return r->gen_rate;
}

/* ------------------------------------------------------------ report */

static FILE *results;

static void both(const char *fmt, va_list ap)
{
	va_list ap2;

	va_copy(ap2, ap);
	vprintf(fmt, ap);
	if (results)
		vfprintf(results, fmt, ap2);
	va_end(ap2);
}

void kb_report_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	both(fmt, ap);
	va_end(ap);
	printf("\n");
	if (results)
		fprintf(results, "\n");
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], *p;

	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) || !(p = strchr(line, ':')))
			continue;
		snprintf(buf, len, "%s", p + 2);
		buf[strcspn(buf, "\n")] = '\0';
		break;
	}
	if (f)
		fclose(f);
}

static void command_line(char *buf, size_t len, int argc, char **argv)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
}

static void table_head(const char *cols)
{
	char head[512], sep[512];
	size_t h = 0, s = 0;
	const char *p;

	h += (size_t)snprintf(head, sizeof(head), "| ");
	s += (size_t)snprintf(sep, sizeof(sep), "|");
	for (p = cols; *p && h < sizeof(head) - 8 && s < sizeof(sep) - 8; p++) {
		if (*p == '|') {
			h += (size_t)snprintf(head + h, sizeof(head) - h, " | ");
			s += (size_t)snprintf(sep + s, sizeof(sep) - s, "---|");
		} else {
			head[h++] = *p;
			head[h] = '\0';
		}
	}
	snprintf(sep + s, sizeof(sep) - s, "---|");
	kb_report_line("%s |", head);
	kb_report_line("%s", sep);
}

int kb_report_begin(const char *title, const char *note, const char *cols, int argc,
		    char **argv)
{
	const char *path = getenv("PERFRING_RESULTS");
	char cpu[128], cmd[1024], date[64];
	struct utsname u;
	time_t now = time(NULL);

	if (path && *path && !(results = fopen(path, "a"))) {
		fprintf(stderr, "kbench: cannot append to %s: %s\n", path, strerror(errno));
		return -errno;
	}
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	command_line(cmd, sizeof(cmd), argc, argv);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	kb_report_line("## %s\n", title);
	kb_report_line("%s, Linux %s, %s (%ld CPUs online). Command: `%s`\n", date, u.release, cpu,
		       sysconf(_SC_NPROCESSORS_ONLN), cmd);
	if (note && *note)
		kb_report_line("%s\n", note);
	table_head(cols);
	return 0;
}

void kb_report_end(void)
{
	kb_report_line("%s", "");
	fflush(stdout);
	if (results)
		fclose(results);
	results = NULL;
}

bool kb_verbose;
uint64_t kb_pace_ns;

void kb_run_print(const char *name, const struct kb_run *r)
{
	if (!kb_verbose)
		return;
	fprintf(stderr, "  %-64s rec %7llu cpu %7.1f ms (sys %5.1f%%) csw %6llu (%5.1f us/csw) "
		"lost %6llu p50 %6.0f p99 %6.0f us gen %4.0fk/s\n", name,
		(unsigned long long)r->records, (double)r->cpu_ns / 1e6,
		r->cpu_ns ? 100.0 * (double)r->sys_ns / (double)r->cpu_ns : 0.0,
		(unsigned long long)r->nvcsw,
		r->nvcsw ? (double)r->cpu_ns / 1e3 / (double)r->nvcsw : 0.0,
		(unsigned long long)r->lost, r->p50_us, r->p99_us, r->gen_rate / 1e3);
}

static void usage(const char *argv0, bool slow, bool only)
{
	fprintf(stderr, "usage: %s [-v] [-n records per run, >= 1000]%s [-r rounds, 1..64]%s"
		" [-p ns between the generator's calls, 0..1000000]\n", argv0,
		slow ? " [-N records per run of the wakeup_events 1 rows, >= 1000]" : "",
		only ? " [-c row,row,...]" : "");
}

static int pace_arg(const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v > 1000000 || arg[0] == '-')
		return 1;
	kb_pace_ns = v;
	return 0;
}

int kb_parse_args_n(int argc, char **argv, long *n, long *slow_n, int *rounds,
		    const char **only)
{
	int c, bad = 0;

	while ((c = getopt(argc, argv, "n:N:r:c:p:v")) != -1) {
		if (c == 'v')
			kb_verbose = true;
		else if (c == 'n')
			*n = strtol(optarg, NULL, 10);
		else if (c == 'N' && slow_n)
			*slow_n = strtol(optarg, NULL, 10);
		else if (c == 'r')
			*rounds = (int)strtol(optarg, NULL, 10);
		else if (c == 'p')
			bad |= pace_arg(optarg);
		else if (c == 'c' && only)
			*only = optarg;
		else
			bad = 1;
	}
	if (bad || optind < argc || *n < 1000 || (slow_n && *slow_n < 1000) || *rounds < 1 ||
	    *rounds > 64) {
		usage(argv[0], slow_n != NULL, only != NULL);
		return -1;
	}
	return 0;
}

int kb_parse_args(int argc, char **argv, long *n, int *rounds, const char **only)
{
	return kb_parse_args_n(argc, argv, n, NULL, rounds, only);
}

int kb_setup(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || kb_pin(KB_CONS_CPU)) {
		fprintf(stderr, "kbench: needs CPUs %d and %d online\n", KB_CONS_CPU, KB_GEN_CPU);
		return -1;
	}
	/* The machine is shared: without priority the consumer waits behind
	 * other work and the rows measure the scheduler. Threads made later
	 * inherit it. Best effort: without CAP_SYS_NICE it stays as it is. */
	if (setpriority(PRIO_PROCESS, 0, -20))
		fprintf(stderr, "kbench: running at normal priority (%s)\n", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	return 0;
}
