/* SPDX-License-Identifier: MIT */
/* Shared pieces of the real-kernel benchmarks: the getpid generator thread,
 * the consumer's tally (own records, latency), rusage deltas, medians and the
 * markdown tables that go to stdout and to $PERFRING_RESULTS. */
#ifndef KBENCH_H
#define KBENCH_H

#include <perfring/perfring.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define KB_GEN_CPU 1
#define KB_CONS_CPU 0
/* A clock read costs about 50 ns here, half a record's whole consumer cost,
 * so latency is taken on every KB_LAT_STRIDE-th record only. The stride is
 * prime so that it does not lock onto one position in 64-record batches. */
#define KB_LAT_STRIDE 31u
#define KB_FLUSH_WAIT_MS 100

static inline uint64_t kb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int kb_pin(int cpu);

/* ---------------------------------------------------------- generator */

/* A thread pinned to KB_GEN_CPU that calls getpid n times once told to go. */
struct kb_gen {
	pthread_t th;
	long n;
	pid_t tid;            /* for the tracepoint filter, known after start */
	int go_fd;            /* eventfd: main -> generator */
	int done_fd;          /* eventfd: readable once the n calls are made */
	bool went;            /* kb_gen_go was called */
	bool joined;
	bool done;            /* atomic; set after the last call */
	uint64_t t0, t1;      /* the loop's CLOCK_MONOTONIC bounds */
	/* Tick mode, set before kb_gen_go: n posts to tick_fd, tick_ns apart,
	 * with getpid calls in between. 0: n getpid calls. */
	uint64_t tick_ns;
	int tick_fd;
};

int kb_gen_start(struct kb_gen *g, long n);
/* An eventfd's count, read through EINTR; 0 if a non-blocking one is at 0. */
uint64_t kb_efd_read(int fd);
void kb_gen_go(struct kb_gen *g);
/* Every record of the stream is in the rings once this is true. */
bool kb_gen_done(const struct kb_gen *g);
/* Joins the thread; returns its calls per second. */
double kb_gen_join(struct kb_gen *g);

/* ------------------------------------------------------------- tally */

/* What a consumer's callbacks saw. */
struct kb_tally {
	pid_t tid;            /* the generator's */
	uint64_t own, foreign;
	uint32_t skip;
	uint64_t *lat;        /* ns, every KB_LAT_STRIDE-th own record */
	size_t nlat, cap;
};

int kb_tally_init(struct kb_tally *t, pid_t tid, long n);
void kb_tally_free(struct kb_tally *t);

static inline void kb_tally_sample(struct kb_tally *t, uint32_t tid, uint64_t time)
{
	if (tid != (uint32_t)t->tid) {
		t->foreign++;
		return;
	}
	t->own++;
	if (++t->skip < KB_LAT_STRIDE)
		return;
	t->skip = 0;
	if (t->nlat < t->cap)
		t->lat[t->nlat++] = kb_now_ns() - time;
}

/* The perfring_sample_fn every libperfring consumer uses (ctx: kb_tally). */
int kb_tally_cb(const struct perfring_sample *s, void *ctx);

/* Byte offsets of TID and TIME in a PERF_RECORD_SAMPLE of this sample_type,
 * from the start of the header (the layout is fixed by the bit order). */
uint32_t kb_tid_offset(uint64_t sample_type);
uint32_t kb_time_offset(uint64_t sample_type);

/* ----------------------------------------------------------- one run */

/* One consumer over one stream. */
struct kb_run {
	uint64_t records;     /* own records delivered */
	uint64_t foreign;     /* records of other tasks (libbpf, before its filter) */
	uint64_t lost;        /* n - records: the stream is exact */
	uint64_t cpu_ns;      /* consumer thread user+system */
	uint64_t sys_ns;      /* of which system (split by ticks: rough) */
	uint64_t nvcsw;       /* consumer thread voluntary context switches */
	uint64_t wall_ns;
	double gen_rate;      /* generator calls per second */
	double p50_us, p99_us, max_us;
	double snap_ms, snap_mib; /* overwrite: the closing snapshot's time and size */
};

/* Consumer thread resource use, for bracketing a consumer loop. */
struct kb_usage {
	uint64_t cpu_ns, sys_ns, nvcsw, wall_ns;
};

/* The bracket every row shares: kb_run_start takes the consumer thread's
 * usage into *u0 and lets the generator go; kb_run_finish, called as soon
 * as the consumer loop returns, takes the usage again, joins the generator
 * and fills r from the tally and the difference. */
void kb_run_start(struct kb_gen *g, struct kb_usage *u0);
void kb_run_finish(struct kb_run *r, struct kb_tally *t, const struct kb_usage *u0,
		   struct kb_gen *g);

/* A libperfring consumer: parse_until over every online CPU, with this
 * ring and wakeup setting (all zero: default polling). */
struct kb_lpr_cfg {
	uint32_t pages, watermark, wakeup_events, flush_ms;
	uint64_t order_window_ns;   /* 0: none; else stop, then the last parse */
};
int kb_run_lpr(const struct kb_lpr_cfg *c, long n, struct kb_run *r);
/* A flight recorder: overwrite rings of this many pages and no reader while
 * the stream runs, then one snapshot (r->snap_ms, r->snap_mib). */
int kb_run_overwrite(uint32_t pages, long n, struct kb_run *r);

/* Builds the getpid session (not started) the consumers share: tracepoint,
 * filter on tid, kb_tally_cb; or, while kb_bpf_map_fd is a map (the BPF
 * output stream of bench/kernel's rows i to l), that map's BPF output. */
extern int kb_bpf_map_fd;
int kb_lpr_session(const struct perfring_opts *o, pid_t tid, struct kb_tally *t,
		   struct perfring_session **out);

/* The generator with no consumer: the untraced reference rate. */
int kb_run_untraced(long n, struct kb_run *r);

/* ----------------------------------------------------------- summary */

double kb_median(double *v, size_t n);
/* Median of get(run) over n runs, and the getters the tables use. */
double kb_median_run(const struct kb_run *runs, size_t n, double (*get)(const struct kb_run *));
double kb_get_cpu_per_k(const struct kb_run *r);
double kb_get_wakeups_per_k(const struct kb_run *r);
double kb_get_cpu_per_wakeup(const struct kb_run *r);
double kb_get_lost(const struct kb_run *r);
double kb_get_foreign(const struct kb_run *r);
double kb_get_p50(const struct kb_run *r);
double kb_get_p99(const struct kb_run *r);
double kb_get_max(const struct kb_run *r);
double kb_get_rate(const struct kb_run *r);

/* ------------------------------------------------------------ report */

/* Starts a markdown section on stdout and, when $PERFRING_RESULTS is set,
 * appended to that file: title, date, kernel, CPU, the exact command, a
 * note, then the table header (cols separated by '|'). */
int kb_report_begin(const char *title, const char *note, const char *cols, int argc,
		    char **argv);
/* One line (a table row or a paragraph), printf-style, to both outputs. */
void kb_report_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kb_report_end(void);

/* Set by -v: one line per run on stderr. */
extern bool kb_verbose;
/* -p: ns from one generator call to the next (0: back to back). */
extern uint64_t kb_pace_ns;
void kb_run_print(const char *name, const struct kb_run *r);

/* Parses the options the benches share: -n records per run, -r rounds, -v,
 * -p the generator's pace (kb_pace_ns) and,
 * when only is not NULL, -c a comma-separated list of rows. 0, or -1 with
 * the usage printed. */
int kb_parse_args(int argc, char **argv, long *n, int *rounds, const char **only);
/* As kb_parse_args, and -N when slow_n is not NULL: records per run of the
 * rows that wake once per record, which cannot afford the main N. */
int kb_parse_args_n(int argc, char **argv, long *n, long *slow_n, int *rounds,
		    const char **only);

/* Pins the consumer, checks perf is usable: 0, or a message and -1. */
int kb_setup(void);

#endif
