/* SPDX-License-Identifier: MIT */
/* bench/ringbuf: a BPF ring buffer read by libbpf's ring_buffer__poll and by
 * libperfring three ways, on the same program and map size: the tests'
 * ring-buffer program (tests/kbpf.c, bpf_ringbuf_reserve + submit of a
 * 24-byte record per getpid call of this process) into a 1 MiB
 * BPF_MAP_TYPE_RINGBUF, a fresh one per run, loaded outside the measured
 * part. The generator thread (CPU 1) makes N getpid calls; the consumer
 * (CPU 0) reads until they are all made, then drains the rest.
 *   libbpf   ring_buffer__new + ring_buffer__poll(100 ms), ring_buffer__consume
 *   wait     perfring_session_parse_until, the session's own wait (default
 *            mode: the rings and ring buffers drained every 15 ms)
 *   waitwm   the same in wakeup mode (wakeup_watermark 4096: an epoll set on
 *            the ring buffer's fd and a timerfd)
 *   l2       a loop of one's own: epoll on perfring_ringbuf_fd(), then
 *            perfring_ringbuf_parse(ev, 0, NULL) when it fires
 *   l2t      the same loop with ring_buffer__poll's 100 ms timeout, which
 *            arms an hrtimer per sleep: the loop's shape, apart from the drain
 *   uv       the libperfring-uv adapter on a uv_loop_t
 * Metric: consumer-thread CPU (user + system, getrusage RUSAGE_THREAD) per
 * record; each round runs every row once, in an order rotated each round;
 * the table gives the median over rounds and the median of the per-round
 * ratios to libbpf's row of the same round. Root, CPUs 0 and 1.
 * usage: ringbuf [-n RECORDS] [-r ROUNDS] [-c ROWS] [-p PACE_NS] [-v] */
#include "kbench.h"
#include "kbpf.h"

#include <perfring/perfring-uv.h>

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define RING_BYTES (1u << 20)
#define REC_SIZE 24u
#define MAX_ROUNDS 64

enum row { R_LIBBPF, R_WAIT, R_WAITWM, R_L2, R_L2T, R_UV, NROW };

static const struct {
	const char *name, *what;
} rows[NROW] = {
	[R_LIBBPF] = { "libbpf", "libbpf ring_buffer__poll (the reference)" },
	[R_WAIT] = { "wait", "libperfring parse_until, default mode (15 ms polling)" },
	[R_WAITWM] = { "waitwm", "libperfring parse_until, wakeup mode (epoll + timerfd)" },
	[R_L2] = { "l2", "libperfring level 2: epoll on perfring_ringbuf_fd + ringbuf_parse" },
	[R_L2T] = { "l2t", "the same loop, epoll_wait with ring_buffer__poll's 100 ms timeout" },
	[R_UV] = { "uv", "libperfring-uv adapter" },
};

/* One run's consumer: the map, the generator and what arrived. */
struct job {
	struct kbpf_rb b;
	struct kb_gen g;
	struct kb_tally t;
	long n;
	struct perfring_session *s;
	struct perfring_event *ev;
};

/* A record of the program: struct kbpf_rec (magic, tgid, tid, ns). */
static void tally_rec(struct kb_tally *t, const void *data, size_t size)
{
	struct kbpf_rec rec;

	if (size < sizeof(rec))
		return;
	memcpy(&rec, data, sizeof(rec));
	kb_tally_sample(t, rec.tid, rec.ns);
}

static int libbpf_cb(void *ctx, void *data, size_t size)
{
	tally_rec(ctx, data, size);
	return 0;
}

static int lpr_cb(const struct perfring_sample *s, void *ctx)
{
	tally_rec(ctx, s->raw, s->raw_size);
	return 0;
}

/* ---------------------------------------------------------------- rows */

static int run_libbpf(struct job *j, struct kb_run *r)
{
	struct ring_buffer *rb = ring_buffer__new(j->b.map, libbpf_cb, &j->t, NULL);
	struct kb_usage u0;
	int err = 0;

	if (!rb)
		return -errno;
	kb_run_start(&j->g, &u0);
	while (err >= 0 && j->t.own < (uint64_t)j->n && !kb_gen_done(&j->g))
		err = ring_buffer__poll(rb, KB_FLUSH_WAIT_MS);
	if (err >= 0)
		err = ring_buffer__consume(rb);
	kb_run_finish(r, &j->t, &u0, &j->g);
	ring_buffer__free(rb);
	return err < 0 ? err : 0;
}

/* The session every libperfring row reads: the ring buffer alone. */
static int session(struct job *j, uint32_t watermark)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = watermark };
	int err;

	if ((err = perfring_session_new(&o, &j->s)) ||
	    (err = perfring_session_add_bpf_ringbuf(j->s, j->b.map, NULL, &j->ev)) ||
	    (err = perfring_event_set_callback(j->ev, lpr_cb, &j->t)) ||
	    (err = perfring_session_start(j->s)))
		fprintf(stderr, "ringbuf: %s\n", perfring_session_last_error(j->s));
	return err;
}

static bool wait_done(void *ctx)
{
	struct job *j = ctx;

	return j->t.own >= (uint64_t)j->n || kb_gen_done(&j->g);
}

static int run_wait(struct job *j, struct kb_run *r, uint32_t watermark)
{
	struct kb_usage u0;
	int err;

	if ((err = session(j, watermark)))
		return err;
	kb_run_start(&j->g, &u0);
	err = perfring_session_parse_until(j->s, wait_done, j);
	if (err >= 0)
		err = perfring_ringbuf_parse(j->ev, 0, NULL);
	kb_run_finish(r, &j->t, &u0, &j->g);
	if (err < 0)
		fprintf(stderr, "ringbuf: %s\n", perfring_session_last_error(j->s));
	return err < 0 ? err : 0;
}

#define DONE_KEY 1u

static int epoll_add(int epfd, int fd, uint32_t key)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = key };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* As libbpf's poll loop: block, drain when the ring buffer's fd fires, stop
 * once the generator's done_fd fires, then drain what is left. */
static int l2_loop(struct job *j, int epfd, int timeout_ms)
{
	struct epoll_event ev[2];
	int k, err = 0;
	bool done = false;

	while (!done && err >= 0) {
		k = epoll_wait(epfd, ev, 2, timeout_ms);
		if (k < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < k; i++) {
			if (ev[i].data.u32 == DONE_KEY)
				done = true;
			else
				err = perfring_ringbuf_parse(j->ev, 0, NULL);
		}
	}
	return err < 0 ? err : perfring_ringbuf_parse(j->ev, 0, NULL);
}

static int run_l2(struct job *j, struct kb_run *r, int timeout_ms)
{
	struct kb_usage u0;
	int epfd, err;

	if ((err = session(j, 0)))
		return err;
	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	/* Added before the records come: a new epoll set misses a past readiness. */
	if (!(err = epoll_add(epfd, perfring_ringbuf_fd(j->ev), 0)) &&
	    !(err = epoll_add(epfd, j->g.done_fd, DONE_KEY))) {
		kb_run_start(&j->g, &u0);
		err = l2_loop(j, epfd, timeout_ms);
		kb_run_finish(r, &j->t, &u0, &j->g);
	}
	close(epfd);
	return err < 0 ? err : 0;
}

static void uv_done_cb(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	uv_stop(p->loop);
}

static int run_uv(struct job *j, struct kb_run *r)
{
	struct perfring_libuv *a = NULL;
	struct kb_usage u0;
	uv_poll_t done;
	uv_loop_t loop;
	int err;

	if ((err = session(j, 0)) || (err = uv_loop_init(&loop)))
		return err;
	if ((err = perfring_libuv_attach(j->s, &loop, NULL, &a))) {
		fprintf(stderr, "ringbuf: %s\n", perfring_session_last_error(j->s));
		uv_run(&loop, UV_RUN_DEFAULT);
	} else {
		uv_poll_init(&loop, &done, j->g.done_fd);
		uv_poll_start(&done, UV_READABLE, uv_done_cb);
		kb_run_start(&j->g, &u0);
		uv_run(&loop, UV_RUN_DEFAULT);
		err = perfring_ringbuf_parse(j->ev, 0, NULL);
		kb_run_finish(r, &j->t, &u0, &j->g);
		perfring_libuv_detach(a, NULL, NULL);
		uv_close((uv_handle_t *)&done, NULL);
		uv_run(&loop, UV_RUN_DEFAULT);
	}
	uv_loop_close(&loop);
	return err < 0 ? err : 0;
}

/* One run of a row: a fresh program and map, the generator, the consumer. */
static int run_row(enum row row, long n, struct kb_run *r)
{
	char why[1024] = "";
	struct job j = { .n = n };
	int err;

	if ((err = kbpf_rb_open(&j.b, getpid(), RING_BYTES, KBPF_RB_RESERVE, REC_SIZE, why,
				sizeof(why)))) {
		fprintf(stderr, "ringbuf: loading the BPF program: %s\n", why);
		return err;
	}
	if (!(err = kb_gen_start(&j.g, n)) && !(err = kb_tally_init(&j.t, j.g.tid, n))) {
		switch (row) {
		case R_LIBBPF: err = run_libbpf(&j, r); break;
		case R_WAIT: err = run_wait(&j, r, 0); break;
		case R_WAITWM: err = run_wait(&j, r, 4096); break;
		case R_L2: err = run_l2(&j, r, -1); break;
		case R_L2T: err = run_l2(&j, r, KB_FLUSH_WAIT_MS); break;
		default: err = run_uv(&j, r); break;
		}
	}
	kb_gen_join(&j.g);
	perfring_session_free(j.s);
	kb_tally_free(&j.t);
	kbpf_rb_close(&j.b);
	return err;
}

/* -------------------------------------------------------------- report */

static struct kb_run res[NROW][MAX_ROUNDS];
static bool selected[NROW];

/* The per-round ratios of a row's CPU per record to libbpf's. */
static void round_ratios(enum row row, int rounds, double *v)
{
	for (int k = 0; k < rounds; k++) {
		double base = kb_get_cpu_per_k(&res[R_LIBBPF][k]);

		v[k] = base > 0 ? kb_get_cpu_per_k(&res[row][k]) / base : 0;
	}
}

/* "median | min-max" of those ratios: one round differs by 10-20% here, so
 * the spread says how far the median can be trusted. */
static const char *ratio_cell(enum row row, int rounds, char *buf, size_t len)
{
	double v[MAX_ROUNDS], lo, hi;

	round_ratios(row, rounds, v);
	lo = hi = v[0];
	for (int k = 1; k < rounds; k++) {
		lo = v[k] < lo ? v[k] : lo;
		hi = v[k] > hi ? v[k] : hi;
	}
	snprintf(buf, len, "%.3f | %.2f-%.2f", kb_median(v, (size_t)rounds), lo, hi);
	return buf;
}

static void report(int rounds, long n, int argc, char **argv)
{
	char note[768];

	snprintf(note, sizeof(note), "%ld getpid calls per run, one 24-byte record each "
		 "(bpf_ringbuf_reserve + submit) into a fresh 1 MiB ring buffer; %d rounds, "
		 "rows interleaved and rotated per round. CPU = consumer thread user+system per "
		 "1,000 records delivered; ratio = median of per-round ratios to libbpf's row, "
		 "rounds' ratios their min-max; lost = calls without a record (failed "
		 "reserves), median. wait drains every 15 ms and a 1 MiB ring holds 32,767 "
		 "records: a fast generator overflows it, so its CPU is per record delivered, "
		 "not comparable.", n, rounds);
	if (kb_report_begin("BPF ring buffer: libperfring against libbpf ring_buffer (bench/ringbuf)",
			    note, "row|reader|CPU us/1k records|ratio to libbpf|rounds' ratios|"
			    "wakeups/1k|CPU us/wakeup|lost|p50 us|p99 us", argc, argv))
		return;
	for (int i = 0; i < NROW; i++) {
		const struct kb_run *r = res[i];
		size_t k = (size_t)rounds;
		char cell[64];

		if (!selected[i])
			continue;
		kb_report_line("| %s | %s | %.1f | %s | %.1f | %.1f | %.0f | %.0f | %.0f |",
			       rows[i].name, rows[i].what, kb_median_run(r, k, kb_get_cpu_per_k),
			       ratio_cell((enum row)i, rounds, cell, sizeof(cell)),
			       kb_median_run(r, k, kb_get_wakeups_per_k),
			       kb_median_run(r, k, kb_get_cpu_per_wakeup),
			       kb_median_run(r, k, kb_get_lost), kb_median_run(r, k, kb_get_p50),
			       kb_median_run(r, k, kb_get_p99));
	}
	kb_report_end();
}

/* name is one of the comma-separated words of list. */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

static int select_rows(const char *only)
{
	for (int i = 0; i < NROW; i++)
		selected[i] = !only || listed(only, rows[i].name);
	if (!selected[R_LIBBPF]) {
		fprintf(stderr, "ringbuf: -c must include libbpf, the reference of every ratio\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = 200000;
	int rounds = 7, err;
	const char *only = NULL;

	if (kb_parse_args(argc, argv, &n, &rounds, &only) || select_rows(only) || kb_setup())
		return 2;
	for (int k = 0; k < rounds; k++) {
		for (int m = 0; m < NROW; m++) {
			int i = (m + k) % NROW;

			if (!selected[i])
				continue;
			if ((err = run_row((enum row)i, n, &res[i][k]))) {
				fprintf(stderr, "ringbuf: %s failed: %s\n", rows[i].name, strerror(-err));
				return 1;
			}
			kb_run_print(rows[i].name, &res[i][k]);
		}
		fprintf(stderr, "ringbuf: round %d/%d done\n", k + 1, rounds);
	}
	report(rounds, n, argc, argv);
	return 0;
}
