/* SPDX-License-Identifier: MIT */
/*
 * bench/kernel: libperfring against libbpf's perf_buffer and a hand-written
 * epoll reader on the real kernel. One getpid stream per run (generator
 * pinned to CPU 1, consumer on CPU 0, rings on every online CPU); every
 * consumer runs once per round, in the same order, for several rounds, and
 * the table gives medians. The targets table compares pairs round by round.
 * The rows that wake once per record run a shorter stream (-N): the traced
 * generator manages only some 50 k calls/s there.
 */
#include "kbench.h"
#include "kbpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef KB_WITH_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif
#ifdef KB_WITH_UV
#include <perfring/perfring-uv.h>
#include <uv.h>
#endif
#ifdef KB_WITH_EVENT
#include <event2/event.h>
#include <perfring/perfring-event.h>
/* libevent and libev both name their flags EV_READ and so on: keep the one
 * value used here, then drop libevent's macros so that <ev.h> parses. */
enum { KB_EVENT_READ = EV_READ };
#undef EV_TIMEOUT
#undef EV_READ
#undef EV_WRITE
#undef EV_SIGNAL
#undef EV_PERSIST
#undef EV_ET
#undef EV_FINALIZE
#undef EV_CLOSED
#undef EVLOOP_ONCE
#undef EVLOOP_NONBLOCK
#undef EVLOOP_NO_EXIT_ON_EMPTY
#endif
#ifdef KB_WITH_EV
#include <ev.h>
#include <perfring/perfring-ev.h>
#endif

#define MAX_CPUS 64

enum kind { UNTRACED, LPR, L2, UV, UV_BARE, EVENT, EV, BPF, HAND, EMPTY, OVW };

struct cfg {
	const char *key;   /* for -c */
	const char *tag;
	const char *name;
	enum kind kind;
	uint32_t pages, watermark, wakeup_events;
	bool optional; /* runs only when -c names it */
	bool bpf;      /* the stream: a BPF program's output on the getpid calls */
};

enum {
	C_UNTRACED, C_POLL, C_WM4K, C_L2, C_WM64K, C_WE1, C_UV, C_UV_BARE, C_EVENT, C_EV, C_BPF4K,
	C_BPF1, C_HAND4K, C_HAND1, C_WM64K_256, C_POLL_256, C_EMPTY, C_OVW, C_POLL_1024,
	C_O_LB4K, C_O_L2, C_O_UV, C_O_UVB, C_O_M4K, C_O_LB1, C_O_L2_1, C_O_UV1, C_O_UVB1, C_O_M1,
	C_WM4K_W, C_UV_W,
	NCFG
};

/* Each name says which API the row reads through. */
static const struct cfg cfgs[NCFG] = {
	[C_UNTRACED] = { "untraced", "-", "untraced getpid loop", UNTRACED, 0, 0, 0, false, false },
	[C_POLL] = { "poll", "a", "libperfring parse_until, default polling (15 ms)", LPR, 64, 0,
		     0, false, false },
	[C_WM4K] = { "wm4k", "b", "libperfring parse_until, watermark 4 KiB", LPR, 64, 4096, 0, false, false },
	[C_L2] = { "l2", "b2", "libperfring Level 2: own epoll + parse_for_cpu, watermark 4 KiB",
		   L2, 64, 4096, 0, false, false },
	[C_WM64K] = { "wm64k", "c", "libperfring parse_until, watermark 64 KiB", LPR, 64, 65536,
		      0, false, false },
	[C_WE1] = { "we1", "d", "libperfring parse_until, wakeup_events 1", LPR, 64, 0, 1, false, false },
	[C_UV] = { "uv", "e", "libperfring-uv, watermark 4 KiB", UV, 64, 4096, 0, false, false },
	[C_UV_BARE] = { "uv-bare", "e0", "bare libuv loop around parse_for_cpu, watermark 4 KiB",
			UV_BARE, 64, 4096, 0, true, false },
	[C_EVENT] = { "event", "e", "libperfring-event, watermark 4 KiB", EVENT, 64, 4096, 0, false, false },
	[C_EV] = { "ev", "e", "libperfring-ev, watermark 4 KiB", EV, 64, 4096, 0, false, false },
	[C_BPF4K] = { "bpf4k", "f", "libbpf perf_buffer__poll, watermark 4 KiB", BPF, 64, 4096, 0, false, false },
	[C_BPF1] = { "bpf1", "f", "libbpf perf_buffer__poll, wakeup_events 1", BPF, 64, 0, 1, false, false },
	[C_HAND4K] = { "hand4k", "g", "hand-written epoll reader, watermark 4 KiB", HAND, 64, 4096, 0, false, false },
	[C_HAND1] = { "hand1", "g", "hand-written epoll reader, wakeup_events 1", HAND, 64, 0, 1, false, false },
	[C_WM64K_256] = { "wm64k-256", "h", "libperfring parse_until, watermark 64 KiB, 256 pages",
			  LPR, 256, 65536, 0, false, false },
	[C_POLL_256] = { "poll-256", "h", "libperfring parse_until, default polling, 256 pages",
			 LPR, 256, 0, 0, false, false },
	[C_EMPTY] = { "empty", "w0", "an empty wakeup: eventfd, no ring, at (g)'s wakeup rate",
		      EMPTY, 0, 0, 0, true, false },
	/* The BPF output stream (tests/kbpf.c's program, 24 bytes a call): -c only. */
	[C_O_LB4K] = { "bpfo-libbpf4k", "i", "BPF output: libbpf perf_buffer__poll, watermark 4 KiB",
		       BPF, 64, 4096, 0, true, true },
	[C_O_L2] = { "bpfo-l2", "j", "BPF output: own epoll + parse_for_cpu, watermark 4 KiB", L2,
		     64, 4096, 0, true, true },
	[C_O_UV] = { "bpfo-uv", "k", "BPF output: libperfring-uv, watermark 4 KiB", UV, 64, 4096,
		     0, true, true },
	[C_O_UVB] = { "bpfo-uv-bare", "k0", "BPF output: bare libuv loop around parse_for_cpu, "
		      "watermark 4 KiB", UV_BARE, 64, 4096, 0, true, true },
	[C_O_M4K] = { "bpfo-merged4k", "l", "BPF output: merged parse_until, watermark 4 KiB", LPR,
		      64, 4096, 0, true, true },
	[C_O_LB1] = { "bpfo-libbpf1", "i", "BPF output: libbpf perf_buffer__poll, wakeup_events 1",
		      BPF, 64, 0, 1, true, true },
	[C_O_L2_1] = { "bpfo-l2-1", "j", "BPF output: own epoll + parse_for_cpu, wakeup_events 1",
		       L2, 64, 0, 1, true, true },
	[C_O_UV1] = { "bpfo-uv1", "k", "BPF output: libperfring-uv, wakeup_events 1", UV, 64, 0, 1,
		      true, true },
	[C_O_UVB1] = { "bpfo-uv-bare1", "k0", "BPF output: bare libuv loop around parse_for_cpu, "
		       "wakeup_events 1", UV_BARE, 64, 0, 1, true, true },
	[C_O_M1] = { "bpfo-merged1", "l", "BPF output: merged parse_until, wakeup_events 1", LPR, 64,
		     0, 1, true, true },
	[C_OVW] = { "ovw", "m", "libperfring overwrite rings, no reader (a snapshot at the end)",
		    OVW, 64, 0, 0, false, false },
	/* (m)'s reference: (a) drops most of the stream (its 64 pages fill in
	 * some 4 ms of a 15 ms sleep), and a dropped record costs the
	 * generator less than a written one; 1024 pages hold 15 ms of it. */
	[C_POLL_1024] = { "poll-1024", "m0", "libperfring parse_until, default polling (15 ms), "
			  "1024 pages", LPR, 1024, 0, 0, false, false },
	/* Time order with a bound: (b) and (e) with a 2 ms order window; -c only
	 * (bench/RESULTS.md's window rows: -c wm4k,wm4k-w2 and -c uv,uv-w2). */
	[C_WM4K_W] = { "wm4k-w2", "b", "libperfring parse_until, watermark 4 KiB, 2 ms window",
		       LPR, 64, 4096, 0, true, false },
	[C_UV_W] = { "uv-w2", "e", "libperfring-uv, watermark 4 KiB, 2 ms window", UV, 64, 4096,
		     0, true, false },
};

#define ROW_WINDOW_NS 2000000ull

/* The order window of a row (the two window rows'). */
static uint64_t row_window(const struct cfg *c)
{
	return c == &cfgs[C_WM4K_W] || c == &cfgs[C_UV_W] ? ROW_WINDOW_NS : 0;
}

/* One wakeup per record slows the traced generator to some 50 k calls/s, so
 * these rows run the shorter stream. */
static long row_n(const struct cfg *c, long n, long slow_n)
{
	return c->wakeup_events == 1 ? slow_n : n;
}

static bool selected[NCFG];

static bool built(enum kind k)
{
	switch (k) {
#ifndef KB_WITH_UV
	case UV:
	case UV_BARE:
		return false;
#endif
#ifndef KB_WITH_EVENT
	case EVENT:
		return false;
#endif
#ifndef KB_WITH_EV
	case EV:
		return false;
#endif
#ifndef KB_WITH_LIBBPF
	case BPF:
		return false;
#endif
	default:
		return true;
	}
}

/* libbpf and the hand-written reader take CPUs 0..n-1 (all online here). */
static int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > MAX_CPUS ? MAX_CPUS : (int)n;
}

/* The getpid attr exactly as libperfring opens it (IDENTIFIER, TID, TIME,
 * CPU, RAW, CLOCK_MONOTONIC, disabled), with the wakeup setting of c; for
 * the BPF stream, libperfring's BPF output attr. */
static int getpid_attr(const struct cfg *c, struct perf_event_attr *a)
{
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err = perfring_session_new(NULL, &s);

	memset(a, 0, sizeof(*a));
	if (!err && c->bpf)
		err = perfring_session_add_bpf_output(s, kb_bpf_map_fd, &ev);
	else if (!err)
		err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev);
	if (!err)
		*a = *perfring_event_attr(ev);
	perfring_session_free(s);
	/* wakeup_events and wakeup_watermark share a union: set one. */
	a->watermark = !!c->watermark;
	if (c->watermark)
		a->wakeup_watermark = c->watermark;
	else
		a->wakeup_events = c->wakeup_events;
	return err;
}

static void getpid_filter(char *buf, size_t len, pid_t tid)
{
	snprintf(buf, len, "common_pid == %d", (int)tid);
}

/* ------------------------------------------------ libperfring on a loop */

#if defined(KB_WITH_UV) || defined(KB_WITH_EVENT) || defined(KB_WITH_EV)

/* The state every adapter consumer shares: generator, tally, session. */
struct job {
	struct kb_gen g;
	struct kb_tally t;
	struct perfring_session *s;
	struct kb_usage u0;
	uint64_t window;     /* the loop's order window (0: none) */
	bool gen_started;
};

static int job_open(struct job *j, const struct cfg *c, long n)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = c->pages,
				   .wakeup_watermark = c->watermark,
				   .wakeup_events = c->wakeup_events };
	int err;

	memset(j, 0, sizeof(*j));
	j->window = row_window(c);
	if ((err = kb_gen_start(&j->g, n)))
		return err;
	j->gen_started = true;
	if ((err = kb_tally_init(&j->t, j->g.tid, n)) ||
	    (err = kb_lpr_session(&o, j->g.tid, &j->t, &j->s)) || (err = perfring_session_start(j->s)))
		fprintf(stderr, "kernel: %s\n", perfring_session_last_error(j->s));
	return err;
}

static void job_go(struct job *j)
{
	kb_run_start(&j->g, &j->u0);
}

/* The loop saw the generator finish: a last drain takes what it wrote. */
static void job_last_drain(struct job *j)
{
	if (j->window) /* the stop lets the parse take what the window kept */
		perfring_session_stop(j->s);
	perfring_session_parse_all(j->s);
}

static void job_finish(struct job *j, struct kb_run *r)
{
	kb_run_finish(r, &j->t, &j->u0, &j->g);
}

static void job_close(struct job *j)
{
	if (j->gen_started)
		kb_gen_join(&j->g);
	perfring_session_free(j->s);
	kb_tally_free(&j->t);
}

#ifdef KB_WITH_UV
static void uv_done_cb(uv_poll_t *p, int status, int events)
{
	job_last_drain(p->data);
	uv_stop(p->loop);
}

static int uv_consume(struct job *j, struct kb_run *r)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .order_window_ns = j->window };
	struct perfring_libuv *a = NULL;
	uv_poll_t done;
	uv_loop_t loop;
	int err;

	if ((err = uv_loop_init(&loop)))
		return err;
	if ((err = perfring_libuv_attach(j->s, &loop, j->window ? &lo : NULL, &a))) {
		uv_run(&loop, UV_RUN_DEFAULT); /* releases what attach had made */
		goto out;
	}
	uv_poll_init(&loop, &done, j->g.done_fd);
	done.data = j;
	uv_poll_start(&done, UV_READABLE, uv_done_cb);
	job_go(j);
	uv_run(&loop, UV_RUN_DEFAULT);
	job_finish(j, r);
	perfring_libuv_detach(a, NULL, NULL);
	uv_close((uv_handle_t *)&done, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
out:
	uv_loop_close(&loop);
	return err;
}

/* The uv row without the adapter: a uv_poll_t on each ring fd calling
 * parse_for_cpu, and a 100 ms uv_timer_t draining every ring, as the
 * adapter's flush does. What the adapter costs over this is its own. */
struct uv_bare {
	struct job *j;
	uv_loop_t loop;
	uv_timer_t flush;
	uv_poll_t done, ring[MAX_CPUS];
	int cpu[MAX_CPUS];
	size_t n;
};

static void uv_bare_ring_cb(uv_poll_t *p, int status, int events)
{
	struct uv_bare *u = p->data;

	(void)status;
	(void)events;
	perfring_session_parse_for_cpu(u->j->s, u->cpu[p - u->ring]);
}

static void uv_bare_flush_cb(uv_timer_t *t)
{
	struct uv_bare *u = t->data;
	size_t i;

	for (i = 0; i < u->n; i++)
		perfring_session_parse_for_cpu(u->j->s, u->cpu[i]);
}

static int uv_bare_start(struct uv_bare *u)
{
	const struct perfring_cpu_fd *fds;
	size_t n = perfring_session_fds(u->j->s, &fds), i;
	int err = 0;

	uv_timer_init(&u->loop, &u->flush);
	u->flush.data = u;
	uv_poll_init(&u->loop, &u->done, u->j->g.done_fd);
	u->done.data = u->j;
	if (n > MAX_CPUS)
		return -E2BIG;
	/* u->n counts the handles initialised, which teardown closes. */
	for (i = 0; i < n && !err; i++) {
		u->cpu[i] = fds[i].cpu;
		u->ring[i].data = u;
		if ((err = uv_poll_init(&u->loop, &u->ring[i], fds[i].fd)))
			break;
		u->n++;
		err = uv_poll_start(&u->ring[i], UV_READABLE, uv_bare_ring_cb);
	}
	if (!err)
		err = uv_timer_start(&u->flush, uv_bare_flush_cb, 100, 100);
	if (!err)
		err = uv_poll_start(&u->done, UV_READABLE, uv_done_cb);
	return err;
}

static int uv_bare_consume(struct job *j, struct kb_run *r)
{
	static struct uv_bare u;
	size_t i;
	int err;

	memset(&u, 0, sizeof(u));
	u.j = j;
	if ((err = uv_loop_init(&u.loop)))
		return err;
	if (!(err = uv_bare_start(&u))) {
		job_go(j);
		uv_run(&u.loop, UV_RUN_DEFAULT);
		job_finish(j, r);
	}
	for (i = 0; i < u.n; i++)
		uv_close((uv_handle_t *)&u.ring[i], NULL);
	uv_close((uv_handle_t *)&u.flush, NULL);
	uv_close((uv_handle_t *)&u.done, NULL);
	uv_run(&u.loop, UV_RUN_DEFAULT);
	uv_loop_close(&u.loop);
	return err;
}
#endif

#ifdef KB_WITH_EVENT
struct event_job {
	struct job *j;
	struct event_base *base;
};

static void event_done_cb(evutil_socket_t fd, short what, void *ctx)
{
	struct event_job *ej = ctx;

	job_last_drain(ej->j);
	event_base_loopbreak(ej->base);
}

static int event_consume(struct job *j, struct kb_run *r)
{
	struct event_job ej = { j, event_base_new() };
	struct perfring_libevent *a = NULL;
	struct event *done = NULL;
	int err;

	if (!ej.base)
		return -ENOMEM;
	if ((err = perfring_libevent_attach(j->s, ej.base, NULL, &a)))
		goto out;
	done = event_new(ej.base, j->g.done_fd, KB_EVENT_READ, event_done_cb, &ej);
	if (!done || event_add(done, NULL)) {
		err = -ENOMEM;
		goto out;
	}
	job_go(j);
	event_base_dispatch(ej.base);
	job_finish(j, r);
out:
	if (done)
		event_free(done);
	if (a)
		perfring_libevent_detach(a);
	event_base_free(ej.base);
	return err;
}
#endif

#ifdef KB_WITH_EV
static void ev_done_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	job_last_drain(w->data);
	ev_break(loop, EVBREAK_ALL);
}

static int ev_consume(struct job *j, struct kb_run *r)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct perfring_libev *a = NULL;
	ev_io done;
	int err;

	if (!loop)
		return -ENOMEM;
	if ((err = perfring_libev_attach(j->s, loop, NULL, &a)))
		goto out;
	ev_io_init(&done, ev_done_cb, j->g.done_fd, EV_READ);
	done.data = j;
	ev_io_start(loop, &done);
	job_go(j);
	ev_run(loop, 0);
	job_finish(j, r);
	ev_io_stop(loop, &done);
	perfring_libev_detach(a);
out:
	ev_loop_destroy(loop);
	return err;
}
#endif

static int run_adapter(const struct cfg *c, long n, struct kb_run *r)
{
	struct job j;
	int err = job_open(&j, c, n);

	if (!err) {
		switch (c->kind) {
#ifdef KB_WITH_UV
		case UV:
			err = uv_consume(&j, r);
			break;
		case UV_BARE:
			err = uv_bare_consume(&j, r);
			break;
#endif
#ifdef KB_WITH_EVENT
		case EVENT:
			err = event_consume(&j, r);
			break;
#endif
#ifdef KB_WITH_EV
		case EV:
			err = ev_consume(&j, r);
			break;
#endif
		default:
			err = -ENOSYS;
		}
	}
	job_close(&j);
	return err;
}
#else
static int run_adapter(const struct cfg *c, long n, struct kb_run *r)
{
	return -ENOSYS;
}
#endif

/* ------------------------------------------------------ libbpf perf_buffer */

#ifdef KB_WITH_LIBBPF
struct bpf_job {
	struct kb_tally t;
	uint32_t tid_off, time_off;
};

static enum bpf_perf_event_ret bpf_event_cb(void *ctx, int cpu, struct perf_event_header *h)
{
	struct bpf_job *b = ctx;
	const uint8_t *p = (const uint8_t *)h;
	uint64_t time;
	uint32_t tid;

	if (h->type == PERF_RECORD_SAMPLE) {
		memcpy(&tid, p + b->tid_off, sizeof(tid));
		memcpy(&time, p + b->time_off, sizeof(time));
		kb_tally_sample(&b->t, tid, time);
	}
	return LIBBPF_PERF_EVENT_CONT;
}

static struct perf_buffer *bpf_open(const struct cfg *c, struct bpf_job *b, int map_fd)
{
	static int cpus[MAX_CPUS], keys[MAX_CPUS];
	LIBBPF_OPTS(perf_buffer_raw_opts, o);
	struct perf_event_attr a;
	int i, n = ncpus();

	if (getpid_attr(c, &a))
		return NULL;
	b->tid_off = kb_tid_offset(a.sample_type);
	b->time_off = kb_time_offset(a.sample_type);
	for (i = 0; i < n; i++)
		cpus[i] = keys[i] = i;
	o.cpu_cnt = n;
	o.cpus = cpus;
	o.map_keys = keys;
	return perf_buffer__new_raw(map_fd, c->pages, &a, bpf_event_cb, b, &o);
}

/* perf_buffer__new_raw enables the events itself: the filter can only come
 * after, so records of other tasks can arrive first (counted as foreign). */
static int bpf_filter(struct perf_buffer *pb, pid_t tid)
{
	char filter[64];
	size_t i;

	getpid_filter(filter, sizeof(filter), tid);
	for (i = 0; i < perf_buffer__buffer_cnt(pb); i++)
		if (ioctl(perf_buffer__buffer_fd(pb, i), PERF_EVENT_IOC_SET_FILTER, filter) < 0)
			return -errno;
	return 0;
}

static int bpf_consume(struct perf_buffer *pb, struct bpf_job *b, struct kb_gen *g, long n,
		       struct kb_run *r)
{
	struct kb_usage u0;
	int err = 0;

	kb_run_start(g, &u0);
	while (err >= 0 && b->t.own < (uint64_t)n && !kb_gen_done(g))
		err = perf_buffer__poll(pb, KB_FLUSH_WAIT_MS);
	if (err >= 0)
		err = perf_buffer__consume(pb);
	kb_run_finish(r, &b->t, &u0, g);
	return err < 0 ? err : 0;
}

static int run_bpf(const struct cfg *c, long n, struct kb_run *r)
{
	struct perf_buffer *pb = NULL;
	struct bpf_job b;
	struct kb_gen g;
	int map_fd, err;

	if ((err = kb_gen_start(&g, n)))
		return err;
	memset(&b, 0, sizeof(b));
	/* The BPF stream's map is its program's; the tracepoint's is a map of our own. */
	map_fd = c->bpf ? dup(kb_bpf_map_fd) :
		 bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "kbench", sizeof(int), sizeof(int),
				(uint32_t)ncpus(), NULL);
	if (map_fd < 0 || (err = kb_tally_init(&b.t, g.tid, n)) || !(pb = bpf_open(c, &b, map_fd)) ||
	    (!c->bpf && (err = bpf_filter(pb, g.tid)))) {
		err = err ? err : (errno ? -errno : -EINVAL);
		fprintf(stderr, "kernel: libbpf perf_buffer: %s\n", strerror(-err));
	} else {
		err = bpf_consume(pb, &b, &g, n, r);
	}
	kb_gen_join(&g);
	perf_buffer__free(pb);
	if (map_fd >= 0)
		close(map_fd);
	kb_tally_free(&b.t);
	return err;
}
#endif

/* --------------------------------------------- consumers on their own epoll */

/* The epoll key of the generator's done_fd; a ring's key is its CPU. */
#define DONE_KEY UINT32_MAX

static int watch(int epfd, int fd, uint32_t key)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = key };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The loop of (b2) and (g), as libbpf's perf_buffer__poll does it: block with
 * no timeout, drain each ring that fired, stop once done_fd fires (after
 * draining the rings of that same wait). */
static int epoll_until_done(int epfd, int (*drain)(void *ctx, int cpu), void *ctx)
{
	struct epoll_event ev[MAX_CPUS + 1];
	int i, k, err;

	for (;;) {
		k = epoll_wait(epfd, ev, MAX_CPUS + 1, -1);
		if (k < 0 && errno != EINTR)
			return -errno;
		for (i = 0; i < k; i++)
			if (ev[i].data.u32 != DONE_KEY && (err = drain(ctx, (int)ev[i].data.u32)))
				return err;
		for (i = 0; i < k; i++)
			if (ev[i].data.u32 == DONE_KEY)
				return 0;
	}
}

/* ---------------------------------------------------- libperfring, level 2 */

/* A caller's own reactor: the session's fds in the caller's epoll set, and
 * perfring_session_parse_for_cpu on each ring that fires. */
struct l2 {
	struct kb_tally t;
	struct perfring_session *s;
	int epfd;
};

static int l2_drain_cpu(void *ctx, int cpu)
{
	int n = perfring_session_parse_for_cpu(((struct l2 *)ctx)->s, cpu);

	return n < 0 ? n : 0;
}

static int l2_open(struct l2 *l, const struct cfg *c, struct kb_gen *g, long n)
{
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = c->pages,
				   .wakeup_watermark = c->watermark,
				   .wakeup_events = c->wakeup_events };
	const struct perfring_cpu_fd *fds;
	size_t i, nfds;
	int err;

	if ((err = kb_tally_init(&l->t, g->tid, n)) ||
	    (err = kb_lpr_session(&o, g->tid, &l->t, &l->s)) ||
	    (err = perfring_session_start(l->s))) {
		fprintf(stderr, "kernel: %s\n", perfring_session_last_error(l->s));
		return err;
	}
	if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	nfds = perfring_session_fds(l->s, &fds);
	for (i = 0; i < nfds; i++)
		if ((err = watch(l->epfd, fds[i].fd, (uint32_t)fds[i].cpu)))
			return err;
	return watch(l->epfd, g->done_fd, DONE_KEY);
}

static int l2_loop(struct l2 *l)
{
	const struct perfring_cpu_fd *fds;
	size_t i, nfds = perfring_session_fds(l->s, &fds);
	int err = epoll_until_done(l->epfd, l2_drain_cpu, l);

	for (i = 0; !err && i < nfds; i++)
		err = l2_drain_cpu(l, fds[i].cpu);
	return err;
}

static int run_l2(const struct cfg *c, long n, struct kb_run *r)
{
	struct l2 l = { .epfd = -1 };
	struct kb_usage u0;
	struct kb_gen g;
	int err;

	if ((err = kb_gen_start(&g, n)))
		return err;
	if (!(err = l2_open(&l, c, &g, n))) {
		kb_run_start(&g, &u0);
		err = l2_loop(&l);
		kb_run_finish(r, &l.t, &u0, &g);
	}
	kb_gen_join(&g);
	if (l.epfd >= 0)
		close(l.epfd);
	perfring_session_free(l.s);
	kb_tally_free(&l.t);
	return err;
}

/* ------------------------------------------------ hand-written epoll reader */

/* The limit: one perf fd per CPU owning its ring, no SET_OUTPUT, no decode.
 * Acquire head, walk by size, touch TID and TIME, release tail. */
struct hring {
	int fd;
	struct perf_event_mmap_page *meta;
	const uint8_t *data;
	uint64_t mask;
	size_t map_len;
};

struct hand {
	struct hring r[MAX_CPUS];
	int nr, epfd;
	uint32_t tid_off, time_off;
	struct kb_tally t;
};

static void hand_drain(struct hand *h, struct hring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail, time;
	const struct perf_event_header *e;
	uint32_t tid;

	while (tail < head) {
		e = (const struct perf_event_header *)(r->data + (tail & r->mask));
		if (!e->size)
			break;
		/* Both fields are naturally aligned, so neither straddles the wrap. */
		if (e->type == PERF_RECORD_SAMPLE) {
			memcpy(&tid, r->data + ((tail + h->tid_off) & r->mask), sizeof(tid));
			memcpy(&time, r->data + ((tail + h->time_off) & r->mask), sizeof(time));
			kb_tally_sample(&h->t, tid, time);
		}
		tail += e->size;
	}
	/* Our reads of the records complete before the kernel may reuse them. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int hand_open_ring(struct hand *h, struct perf_event_attr *a, int cpu, uint32_t pages,
			  const char *filter)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct hring *r = &h->r[cpu];
	void *map;

	r->fd = (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	h->nr = cpu + 1;
	if (ioctl(r->fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0)
		return -errno;
	r->map_len = page * (1 + pages);
	map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	r->meta = map;
	r->data = (const uint8_t *)map + page;
	r->mask = (uint64_t)pages * page - 1;
	return watch(h->epfd, r->fd, (uint32_t)cpu);
}

static int hand_open(struct hand *h, const struct cfg *c, struct kb_gen *g)
{
	struct perf_event_attr a;
	char filter[64];
	int cpu, err, n = ncpus();

	if ((err = getpid_attr(c, &a)))
		return err;
	h->tid_off = kb_tid_offset(a.sample_type);
	h->time_off = kb_time_offset(a.sample_type);
	getpid_filter(filter, sizeof(filter), g->tid);
	if ((h->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	for (cpu = 0; cpu < n; cpu++)
		if ((err = hand_open_ring(h, &a, cpu, c->pages, filter)))
			return err;
	for (cpu = 0; cpu < n; cpu++)
		if (ioctl(h->r[cpu].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return watch(h->epfd, g->done_fd, DONE_KEY);
}

static void hand_close(struct hand *h)
{
	int i;

	for (i = 0; i < h->nr; i++) {
		if (h->r[i].meta)
			munmap(h->r[i].meta, h->r[i].map_len);
		if (h->r[i].fd >= 0)
			close(h->r[i].fd);
	}
	if (h->epfd >= 0)
		close(h->epfd);
}

static int hand_drain_cpu(void *ctx, int cpu)
{
	struct hand *h = ctx;

	hand_drain(h, &h->r[cpu]);
	return 0;
}

/* Returns once the generator is done and every ring was drained after it. */
static int hand_loop(struct hand *h)
{
	int i, err = epoll_until_done(h->epfd, hand_drain_cpu, h);

	for (i = 0; !err && i < h->nr; i++)
		hand_drain(h, &h->r[i]);
	return err;
}

static int run_hand(const struct cfg *c, long n, struct kb_run *r)
{
	static struct hand h;
	struct kb_usage u0;
	struct kb_gen g;
	int i, err;

	memset(&h, 0, sizeof(h));
	h.epfd = -1;
	for (i = 0; i < MAX_CPUS; i++)
		h.r[i].fd = -1;
	if ((err = kb_gen_start(&g, n)))
		return err;
	if ((err = kb_tally_init(&h.t, g.tid, n)) || (err = hand_open(&h, c, &g))) {
		fprintf(stderr, "kernel: hand-written reader: %s\n", strerror(-err));
	} else {
		kb_run_start(&g, &u0);
		err = hand_loop(&h);
		kb_run_finish(r, &h.t, &u0, &g);
	}
	kb_gen_join(&g);
	hand_close(&h);
	kb_tally_free(&h.t);
	return err;
}

/* ------------------------------------------------------- an empty wakeup */

/* What one cross-CPU wakeup costs the consumer thread with nothing to read:
 * the generator posts an eventfd every empty_tick_ns (getpid calls between),
 * and the consumer blocks in epoll_wait and reads it. n / 256 posts: a
 * quarter of the wakeups a 4 KiB watermark makes for n 64-byte records. */
static uint64_t empty_tick_ns = 100000; /* then (g) 4 KiB's, in each round */

struct empty {
	struct kb_tally t; /* own: posts read */
	int fd;
};

static int empty_drain(void *ctx, int key)
{
	struct empty *e = ctx;

	(void)key;
	e->t.own += kb_efd_read(e->fd);
	return 0;
}

static int run_empty(long n, struct kb_run *r)
{
	struct empty e = { .fd = -1 };
	struct kb_usage u0;
	struct kb_gen g;
	int epfd = -1, err;

	if ((err = kb_gen_start(&g, n / 256 > 0 ? n / 256 : 1)))
		return err;
	if ((err = kb_tally_init(&e.t, g.tid, 0)) ||
	    (e.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 || (err = watch(epfd, e.fd, 0)) ||
	    (err = watch(epfd, g.done_fd, DONE_KEY))) {
		err = err ? err : -errno;
	} else {
		g.tick_fd = e.fd;
		g.tick_ns = empty_tick_ns;
		kb_run_start(&g, &u0);
		if (!(err = epoll_until_done(epfd, empty_drain, &e)))
			empty_drain(&e, 0);
		kb_run_finish(r, &e.t, &u0, &g);
	}
	kb_gen_join(&g);
	if (epfd >= 0)
		close(epfd);
	if (e.fd >= 0)
		close(e.fd);
	kb_tally_free(&e.t);
	return err;
}

/* ------------------------------------------------------------- rounds */

static int run_stream(const struct cfg *c, long n, struct kb_run *r);

/* A BPF stream row: its program is loaded for this process's generator
 * around the run (outside the measured part) and gone before the next row. */
static int run_cfg(const struct cfg *c, long n, struct kb_run *r)
{
	char why[1024] = "";
	struct kbpf b;
	int err;

	if (!c->bpf)
		return run_stream(c, n, r);
	if ((err = kbpf_open(&b, getpid(), 0, why, sizeof(why)))) {
		fprintf(stderr, "kernel: loading the BPF program: %s\n", why);
		return err;
	}
	kb_bpf_map_fd = b.out_map;
	err = run_stream(c, n, r);
	kb_bpf_map_fd = -1;
	kbpf_close(&b);
	return err;
}

static int run_stream(const struct cfg *c, long n, struct kb_run *r)
{
	struct kb_lpr_cfg lc = { c->pages, c->watermark, c->wakeup_events, 0, row_window(c) };

	switch (c->kind) {
	case UNTRACED:
		return kb_run_untraced(n, r);
	case LPR:
		return kb_run_lpr(&lc, n, r);
	case L2:
		return run_l2(c, n, r);
#ifdef KB_WITH_LIBBPF
	case BPF:
		return run_bpf(c, n, r);
#endif
	case HAND:
		return run_hand(c, n, r);
	case EMPTY:
		return run_empty(n, r);
	case OVW:
		return kb_run_overwrite(c->pages, n, r);
	default:
		return run_adapter(c, n, r);
	}
}

static struct kb_run res[NCFG][64];

/* Rows compared by a target run next to each other, so that the load of the
 * machine drifts as little as possible between the two. */
static const int run_order[NCFG] = {
	C_UNTRACED, C_WM4K, C_L2, C_BPF4K, C_HAND4K, C_EMPTY, C_UV, C_UV_BARE, C_EVENT, C_EV, C_WE1,
	C_BPF1, C_HAND1, C_WM64K_256, C_POLL_256, C_POLL, C_OVW, C_POLL_1024, C_WM64K,
	C_O_LB4K, C_O_L2, C_O_UV, C_O_UVB, C_O_M4K, C_O_LB1, C_O_L2_1, C_O_UV1, C_O_UVB1, C_O_M1,
	C_WM4K_W, C_UV_W,
};

static int run_rounds(long n, long slow_n, int rounds)
{
	int i, j, k, err;

	for (k = 0; k < rounds; k++) {
		for (j = 0; j < NCFG; j++) {
			i = run_order[j];
			if (!selected[i])
				continue;
			if ((err = run_cfg(&cfgs[i], row_n(&cfgs[i], n, slow_n), &res[i][k]))) {
				fprintf(stderr, "kernel: %s failed: %s\n", cfgs[i].name, strerror(-err));
				return err;
			}
			kb_run_print(cfgs[i].name, &res[i][k]);
			if (i == C_HAND4K && res[i][k].nvcsw)
				empty_tick_ns = res[i][k].wall_ns / res[i][k].nvcsw;
		}
		fprintf(stderr, "kernel: round %d/%d done\n", k + 1, rounds);
	}
	return 0;
}

/* ------------------------------------------------------------- report */

/* Generator rate over the same round's untraced rate. */
static double rate_ratio(int i, int k)
{
	double base = res[C_UNTRACED][k].gen_rate;

	return base > 0 ? res[i][k].gen_rate / base : 0.0;
}

static double median_rate_ratio(int i, int rounds)
{
	double v[64];
	int k;

	for (k = 0; k < rounds; k++)
		v[k] = rate_ratio(i, k);
	return kb_median(v, (size_t)rounds);
}

static void print_row(int i, int rounds)
{
	const struct kb_run *runs = res[i];
	size_t k = (size_t)rounds;

	if (cfgs[i].kind == EMPTY) {
		kb_report_line("| %s | %s | - | - | %.1f | - | - | - | - | - | - | - |", cfgs[i].tag,
			       cfgs[i].name, kb_median_run(runs, k, kb_get_cpu_per_wakeup));
		return;
	}
	if (cfgs[i].kind == UNTRACED) {
		kb_report_line("| %s | %s | - | - | - | - | - | - | - | - | %.0f | 1.00 |", cfgs[i].tag,
			       cfgs[i].name, kb_median_run(runs, k, kb_get_rate) / 1000.0);
		return;
	}
	kb_report_line("| %s | %s | %.1f | %.2f | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | "
		       "%.2f |", cfgs[i].tag, cfgs[i].name, kb_median_run(runs, k, kb_get_cpu_per_k),
		       kb_median_run(runs, k, kb_get_wakeups_per_k),
		       kb_median_run(runs, k, kb_get_cpu_per_wakeup),
		       kb_median_run(runs, k, kb_get_lost), kb_median_run(runs, k, kb_get_foreign),
		       kb_median_run(runs, k, kb_get_p50), kb_median_run(runs, k, kb_get_p99),
		       kb_median_run(runs, k, kb_get_max), kb_median_run(runs, k, kb_get_rate) / 1000.0,
		       median_rate_ratio(i, rounds));
}

/* Median over rounds of get(a) / get(b), paired within each round; lo and
 * hi (may be NULL) get the smallest and largest round's ratio. */
static double paired(int a, int b, int rounds, double (*get)(const struct kb_run *),
		     double *lo, double *hi)
{
	double v[64] = { 0 };
	int k;

	for (k = 0; k < rounds; k++)
		v[k] = get(&res[b][k]) > 0 ? get(&res[a][k]) / get(&res[b][k]) : 0.0;
	if (lo && hi) {
		*lo = *hi = v[0];
		for (k = 1; k < rounds; k++) {
			*lo = v[k] < *lo ? v[k] : *lo;
			*hi = v[k] > *hi ? v[k] : *hi;
		}
	}
	return kb_median(v, (size_t)rounds);
}

/* One target line: get(a) / get(b), paired by round, against goal (at
 * most goal, or with higher at least; 0 = only reported). */
static void ratio_target(const char *what, int a, int b, double (*get)(const struct kb_run *),
			 double goal, bool higher, int rounds)
{
	double q, lo, hi;
	char g[32] = "-";

	if (!selected[a] || !selected[b])
		return;
	q = paired(a, b, rounds, get, &lo, &hi);
	if (goal > 0)
		snprintf(g, sizeof(g), "%s %.2f", higher ? ">=" : "<=", goal);
	kb_report_line("| %s: (%s) %s vs (%s) %s | %.3f | %.2f-%.2f | %s | %s (%+.1f%%) |", what,
		       cfgs[a].tag, cfgs[a].name, cfgs[b].tag, cfgs[b].name, q, lo, hi, g,
		       goal <= 0 ? "reported" : (higher ? q >= goal : q <= goal) ? "met" : "missed",
		       (q - 1.0) * 100.0);
}

static void cpu_target(int a, int b, double goal, int rounds)
{
	ratio_target("CPU per record", a, b, kb_get_cpu_per_k, goal, false, rounds);
}

static void rate_target(int a, int b, double goal, int rounds)
{
	ratio_target("generator rate", a, b, kb_get_rate, goal, true, rounds);
}

static void h_targets(int rounds)
{
	double q, lo, hi, lost_wm, lost_poll;

	if (!selected[C_WM64K_256] || !selected[C_POLL_256])
		return;
	q = paired(C_WM64K_256, C_POLL_256, rounds, kb_get_rate, &lo, &hi);
	lost_wm = kb_median_run(res[C_WM64K_256], (size_t)rounds, kb_get_lost);
	lost_poll = kb_median_run(res[C_POLL_256], (size_t)rounds, kb_get_lost);

	kb_report_line("| generator rate: (h) watermark 64 KiB vs polling, 256 pages | %.3f | "
		       "%.2f-%.2f | >= 0.95 | %s (%+.1f%%) |", q, lo, hi, q >= 0.95 ? "met" : "missed",
		       (q - 1.0) * 100.0);
	kb_report_line("| lost: (h) watermark 64 KiB vs polling, 256 pages | %.0f vs %.0f | - | 0 | "
		       "%s |", lost_wm, lost_poll, lost_wm == 0 ? "met" : "missed");
}

/* Not a target of the issue: how much of the uv row is the adapter's own,
 * over a bare libuv loop around the same parse (uv-bare, run with -c). */
static void loop_share(int rounds)
{
	double q, lo, hi;

	if (!selected[C_UV] || !selected[C_UV_BARE])
		return;
	q = paired(C_UV, C_UV_BARE, rounds, kb_get_cpu_per_k, &lo, &hi);
	kb_report_line("| CPU per record: (e) %s vs (e0) %s | %.3f | %.2f-%.2f | - | "
		       "the adapter's own share (%+.1f%%) |", cfgs[C_UV].name, cfgs[C_UV_BARE].name,
		       q, lo, hi, (q - 1.0) * 100.0);
}

/* Not a target of the issue: each 4 KiB row's CPU per wakeup over that of
 * an empty wakeup (w0, run with -c) in the same round. */
static void over_empty(int rounds)
{
	static const int rows[] = { C_WM4K, C_L2, C_UV, C_UV_BARE, C_EVENT, C_EV, C_BPF4K, C_HAND4K };
	double q, lo, hi;
	size_t i;

	if (!selected[C_EMPTY])
		return;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!selected[rows[i]])
			continue;
		q = paired(rows[i], C_EMPTY, rounds, kb_get_cpu_per_wakeup, &lo, &hi);
		kb_report_line("| CPU per wakeup: (%s) %s vs (w0) an empty wakeup | %.3f | %.2f-%.2f "
			       "| - | %+.1f%% |", cfgs[rows[i]].tag, cfgs[rows[i]].name, q, lo, hi,
			       (q - 1.0) * 100.0);
	}
}

static double get_snap_ms(const struct kb_run *r)
{
	return r->snap_ms;
}

static double get_snap_mib(const struct kb_run *r)
{
	return r->snap_mib;
}

static double get_snap_ms_per_mib(const struct kb_run *r)
{
	return r->snap_mib > 0 ? r->snap_ms / r->snap_mib : 0.0;
}

/* (m)'s targets: the recorder's cost to the traced loop, and a snapshot's.
 * The reference is polling that reads every record, (m0): the recorder has
 * the kernel write every record too. Against (a), which loses most, the
 * ratio is the price of writing a record over dropping it. */
static void m_targets(int rounds)
{
	size_t k = (size_t)rounds;
	double lost;

	rate_target(C_OVW, C_POLL_1024, 0.95, rounds);
	if (selected[C_POLL_1024]) {
		lost = kb_median_run(res[C_POLL_1024], k, kb_get_lost);
		kb_report_line("| lost: (m0), the reference must read every record | %.0f | - | 0 "
			       "| %s |", lost, lost == 0 ? "met" : "missed: (m0) is no reference");
	}
	rate_target(C_OVW, C_POLL, 0, rounds);
	rate_target(C_OVW, C_UNTRACED, 0, rounds);
	rate_target(C_OVW, C_WM64K, 0, rounds);
	if (!selected[C_OVW])
		return;
	kb_report_line("| snapshot time per MiB read: (m), one snapshot of %.2f MiB | %.2f ms | "
		       "- | reported | the pause (one grace period), the copy and the delivery: %.2f ms per "
		       "snapshot |", kb_median_run(res[C_OVW], k, get_snap_mib),
		       kb_median_run(res[C_OVW], k, get_snap_ms_per_mib),
		       kb_median_run(res[C_OVW], k, get_snap_ms));
}

static void print_targets(int rounds)
{
	static const int lpr4k[] = { C_WM4K, C_L2, C_UV, C_EVENT, C_EV };
	size_t i;

	kb_report_line("%s", "");
	kb_report_line("Targets (median over rounds of the per-round ratio A / B; rounds: the "
		       "smallest and largest round's ratio, the noise of this machine):\n");
	kb_report_line("| target | ratio | rounds | goal | verdict |");
	kb_report_line("|---|---|---|---|---|");
	for (i = 0; i < sizeof(lpr4k) / sizeof(lpr4k[0]); i++)
		cpu_target(lpr4k[i], C_BPF4K, 1.0, rounds);
	cpu_target(C_WE1, C_BPF1, 1.0, rounds);
	for (i = 0; i < sizeof(lpr4k) / sizeof(lpr4k[0]); i++)
		cpu_target(lpr4k[i], C_HAND4K, 1.10, rounds);
	cpu_target(C_WE1, C_HAND1, 1.10, rounds);
	h_targets(rounds);
	/* Issue 18: the BPF output stream. */
	cpu_target(C_O_L2, C_O_LB4K, 1.00, rounds);
	cpu_target(C_O_L2_1, C_O_LB1, 1.00, rounds);
	cpu_target(C_O_UV, C_O_UVB, 1.03, rounds);
	cpu_target(C_O_UV1, C_O_UVB1, 1.03, rounds);
	m_targets(rounds);
	/* Issue 34: the order window's cost on the same stream. */
	cpu_target(C_WM4K_W, C_WM4K, 1.05, rounds);
	cpu_target(C_UV_W, C_UV, 1.05, rounds);
	loop_share(rounds);
	over_empty(rounds);
}

static int report(long n, long slow_n, int rounds, int argc, char **argv)
{
	char note[3072];
	int i;

	snprintf(note, sizeof(note),
		 "%ld syscalls:sys_enter_getpid records per run (sample_period 1, RAW, 64 B each), "
		 "except %ld for the three wakeup_events 1 rows (d, f, g), where one wakeup per "
		 "record holds the traced generator to some 50 k calls/s. "
		 "Generator thread on CPU %d, consumer on CPU %d; a ring on every online CPU. "
		 "Each round runs every row once (rows compared by a target back to back); %d "
		 "rounds; medians. Which API: (a), (b), (c), (d) and (h) call "
		 "perfring_session_parse_until (the session's own wait, records merged in time "
		 "order across CPUs); (b2) is the caller's own epoll set over "
		 "perfring_session_fds() and the generator's done fd, epoll_wait with no timeout "
		 "and perfring_session_parse_for_cpu() on each ring that fires, the loop of (g) "
		 "and of libbpf's perf_buffer__poll (which (f) calls with a %d ms timeout); (e) "
		 "are the adapters on their loops. CPU is the consumer thread's "
		 "getrusage(RUSAGE_THREAD) "
		 "per 1,000 delivered records; wakeups are its voluntary context switches (CPU / "
		 "wakeup: the run's CPU over them); lost = records written minus delivered, of "
		 "the row's N; foreign = records of other tasks (libbpf enables before the filter "
		 "can be set); latency = CLOCK_MONOTONIC at the callback minus the record's time, "
		 "on one record in %u; rate ratio = generator calls/s over the same round's "
		 "untraced loop. (w0), when -c names it, reads no records: the generator posts "
		 "an eventfd at the wakeup rate (g) 4 KiB had in that round (every 100 µs when "
		 "(g) 4 KiB does not run), calling getpid in between, and the consumer blocks in "
		 "epoll_wait and reads it. (i) to (l), when -c names them, read the BPF output "
		 "stream instead: a BPF program on the same tracepoint (tests/kbpf.c, raw "
		 "instructions) writes 24 bytes per call of this process with "
		 "bpf_perf_event_output (72-byte records), loaded around each run; (i) is "
		 "perf_buffer__new_raw with libperfring's BPF output attr. (m) is the flight recorder: overwrite rings "
		 "(opts.overwrite) and no reader while the stream runs, then one "
		 "perfring_session_snapshot(); its lost are the records newer ones overwrote, "
		 "its CPU is that snapshot's. (m0), its reference, polls as (a) does with a ring "
		 "that holds a 15 ms sleep's worth, so that it loses nothing: a record the kernel "
		 "drops costs the generator less than one it writes, and (a) drops most.",
		 n, slow_n, KB_GEN_CPU, KB_CONS_CPU, rounds, KB_FLUSH_WAIT_MS, KB_LAT_STRIDE);
	if (kb_report_begin("libperfring against libbpf and a hand-written reader (bench/kernel)",
			    note, "#|consumer|CPU µs / 1,000 rec|wakeups / 1,000 rec|CPU µs / wakeup|lost|foreign|"
			    "p50 µs|p99 µs|max µs|generator k calls/s|rate / untraced", argc, argv))
		return 1;
	for (i = 0; i < NCFG; i++)
		if (selected[i])
			print_row(i, rounds);
	print_targets(rounds);
	kb_report_end();
	return 0;
}

/* Every built row, or those listed (the untraced reference always runs). */
static int select_rows(const char *only)
{
	char buf[256], *tok, *save = NULL;
	int i;

	for (i = 0; i < NCFG; i++)
		selected[i] = built(cfgs[i].kind) && ((!only && !cfgs[i].optional) || i == C_UNTRACED);
	if (!only)
		return 0;
	snprintf(buf, sizeof(buf), "%s", only);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NCFG && strcmp(tok, cfgs[i].key); i++)
			;
		if (i == NCFG || !built(cfgs[i].kind)) {
			fprintf(stderr, "kernel: no row \"%s\" in this build; rows:", tok);
			for (i = 0; i < NCFG; i++)
				if (built(cfgs[i].kind))
					fprintf(stderr, " %s", cfgs[i].key);
			fprintf(stderr, "\n");
			return -1;
		}
		selected[i] = true;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	long n = 1000000, slow_n = 60000;
	int rounds = 9;

	if (kb_parse_args_n(argc, argv, &n, &slow_n, &rounds, &only) || select_rows(only) ||
	    kb_setup())
		return 2;
	if (run_rounds(n, slow_n, rounds))
		return 1;
	return report(n, slow_n, rounds, argc, argv);
}
