/* SPDX-License-Identifier: MIT */
/* perfring-watch: what its files share. One file per job:
 *   main.c        main: arguments -> session -> loop -> summary
 *   args.c        command line and --help
 *   session.c     the session, its events and the unprivileged fallback
 *   child.c       the -- COMMAND child: spawn, release, reap, end
 *   run.c         what every loop calls: start, tick, signal, stop, finish
 *   stats.c       per-CPU counters and latency histograms
 *   hotplug.c     CPUs that leave and join while the run goes on
 *   view.c        the TTY table, the piped lines and the JSON
 *   byview.c      the --by tables in those three forms
 *   print.c       --print: one perf-script line per sample, time-ordered
 *   profile.c     --profile: the top user IPs as PATH+0xOFFSET
 *   recorder.c    --overwrite: the flight recorder, its snapshots on a signal
 *   metrics.c     the /metrics page (Prometheus text format)
 *   bpf.c         --bpf-map: a pinned map by its path and type, and --dump's lines
 *   rbview.c      --bpf-map's ring buffers: their rows, summary and /metrics
 *   http.c        --listen: evhttp on the libevent loop, bounded clients
 *   fieldcount.c  --by: a field's values counted (shared with the exporter)
 *   textesc.c     hostile text made safe to show, one escaping for every mode
 *   epoll.c, uv.c, event.c, ev.c   one loop each (epoll.c on
 *                 examples/epoll-driver.c, the teaching driver)
 * No loop header is included here: ev.h and event2/event.h cannot share a file. */
#ifndef PERFRING_WATCH_H
#define PERFRING_WATCH_H

#include <perfring/perfring.h>

#include "fieldcount.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define WATCH_MAX_EVENTS 64
#define WATCH_HIST_LOG 3                    /* 2^3 linear sub-buckets per power of two */
#define WATCH_HIST_SUB (1u << WATCH_HIST_LOG)
#define WATCH_HIST_N (64 * WATCH_HIST_SUB)
#define WATCH_NS 1000000000ull
#define WATCH_MAX_BY 16
#define WATCH_LAT_BUCKETS 19                /* /metrics: 10 us to 10 s, 1-2.5-5 a decade */
#define WATCH_ORDER_WINDOW_MS 10            /* --print's default --order-window */
#define WATCH_ORDER_WINDOW_MAX_MS 60000

/* Exit codes besides the command's own status. */
#define WATCH_EXIT_FAIL 1
#define WATCH_EXIT_USAGE 2

enum watch_prog { WATCH_PROG_WATCH, WATCH_PROG_EXPORTER };

enum watch_loop_kind { WATCH_LOOP_DEFAULT, WATCH_LOOP_EPOLL, WATCH_LOOP_UV, WATCH_LOOP_EVENT,
		       WATCH_LOOP_EV };

struct watch_sw {
	enum perfring_software kind;
	uint64_t period;
};

struct watch_args {
	const char *tp[WATCH_MAX_EVENTS];   /* "system:name", pointing into argv */
	size_t tp_cnt;
	struct watch_sw sw[WATCH_MAX_EVENTS];
	size_t sw_cnt;
	int *cpus;                          /* NULL = every online CPU */
	size_t cpu_cnt;
	int pid;                            /* -p */
	char **command;                     /* -- COMMAND ARGS, NULL-terminated */
	enum watch_loop_kind loop;
	uint32_t watermark, wakeup_events, flush_ms, budget, pages;
	bool watermark_set;
	double duration_s;                  /* 0 = until a signal */
	bool json;
	enum watch_prog prog;
	const char *filter[WATCH_MAX_EVENTS];   /* --filter of tp[i], or NULL */
	const char *by[WATCH_MAX_BY];       /* --by SYSTEM:NAME:FIELD, pointing into argv */
	size_t by_cnt;
	char by_event[WATCH_MAX_BY][FC_NAME_MAX];   /* a --by event -e did not name */
	uint32_t top, max_series;           /* --top (0 = fit the screen), --max-series */
	bool print;
	const char *listen;                 /* --listen ADDR:PORT, or NULL */
	const char *bpf_map[WATCH_MAX_EVENTS];  /* --bpf-map PIN_PATH, pointing into argv */
	size_t bpf_cnt;
	bool dump;                          /* --dump: each BPF payload's first bytes */
	uint32_t dump_bytes;                /* --dump-bytes: how many (WATCH_DUMP_BYTES) */
	bool dump_bytes_set;
	bool overwrite;                     /* --overwrite: a flight recorder */
	int snapshot_sig;                   /* --snapshot-on SIGNAL, or 0 */
	const char *snapshot_dir;           /* --snapshot-dir DIR, or NULL: stdout */
	uint32_t snapshot_wait;             /* --snapshot-wait: enum perfring_snapshot_wait */
	bool snapshot_wait_set;
	const char *uprobe[WATCH_MAX_EVENTS];   /* -u PATH:SYMBOL[%return], into argv */
	size_t uprobe_cnt;
	const char *cgroup;                 /* --cgroup PATH, or NULL */
	uint32_t profile_hz;                /* --profile HZ, 0 = off */
	uint64_t order_window_ns;           /* --print's --order-window; 0 = off */
	bool order_window_set;
};

struct watch_hist {
	uint64_t n;
	uint64_t b[WATCH_HIST_N];
};

/* One CPU, or the total (cpu -1), over an interval or the whole run. */
struct watch_row {
	int cpu;
	uint64_t events, bytes, wakeups, records, lost;
	uint32_t fill_pct;
	uint64_t p50_ns, p99_ns;
};

struct watch_cpu {
	int cpu;
	uint64_t events;                    /* samples seen by our callback since start */
	uint64_t tick_events;               /* events at the last tick */
	struct perfring_cpu_stats tick;     /* the session's counters at the last tick */
	struct watch_hist sec, all;         /* delivery latency: this interval, whole run */
	bool hup;
	bool on, ever;                      /* its ring is open now; was at some time */
};

struct watch;

/* One event of the session: the sample callback's context. */
struct watch_ev {
	struct watch *w;
	struct perfring_event *ev;
	size_t idx;
	struct fieldcount *by[WATCH_MAX_BY];    /* the --by counters of this event */
	size_t nby;
	struct watch_fmt *fmt;              /* --print: its fields, or NULL */
	bool dump;                          /* --dump this event's samples */
	bool profile;                       /* the --profile event */
	struct watch_rb *rb;                /* a --bpf-map ring buffer's, or NULL */
};

/* A --bpf-map that is a BPF_MAP_TYPE_RINGBUF: a row of its own. */
struct watch_rb {
	struct watch_ev *e;
	const char *path;                   /* the pin, as given */
	struct perfring_ringbuf_stats tick; /* its counters at the last tick */
};

/* The TTY frame: built whole, then written at once. */
struct watch_frame {
	char *buf;
	size_t len, cap;
	int cols, rows;
	bool utf8;
};

struct watch {
	struct watch_args a;
	struct watch_ev evs[2 * WATCH_MAX_EVENTS + 2];
	struct fieldcount by[WATCH_MAX_BY];
	size_t nby;
	uint64_t *ev_cpu_samples;           /* [event idx * ncpu + cpu slot] */
	uint64_t lat_b[WATCH_LAT_BUCKETS + 1];  /* the last one: above 10 s */
	uint64_t lat_sum_ns;
	struct watch_print *print;          /* --print state, or NULL */
	struct watch_http *http;            /* --listen state, or NULL */
	struct watch_prof *prof;            /* --profile state, or NULL */
	struct watch_rb rbs[WATCH_MAX_EVENTS];
	size_t nrb;
	struct watch_frame frame;
	bool quiet;                         /* no table, no summary (a server) */
	struct perfring_session *s;
	const char *loop_name;
	const char *names[2 * WATCH_MAX_EVENTS + 2];
	size_t nnames;
	bool user_only;                     /* fell back to exclude_kernel software events */
	struct watch_cpu *cpus;             /* one per watched CPU, sorted */
	size_t ncpu, nhup;                  /* ncpu: with hotplug, every possible CPU */
	size_t non, nrows;                  /* CPUs open now; rows of the table shown */
	int *slot_of_cpu;                   /* cpu number -> index in cpus, or -1 */
	int max_cpu;
	pid_t child;                        /* -- COMMAND, or 0 */
	int go_fd;                          /* write end the waiting child reads */
	bool child_done;
	int child_status;                   /* wait status once child_done */
	uint64_t t0_ns, last_tick_ns, end_ns;
	unsigned ticks;
	int signo;                          /* SIGINT/SIGTERM that ended the run, or 0 */
	bool tty, stopping, failed;
	bool out_gone;                      /* stdout's reader went away (EPIPE) */
	int drawn_lines;
	void (*loop_stop)(struct watch *w); /* set by the loop glue */
	void *loop;                         /* the glue's own state */
	unsigned snapshots;                 /* --overwrite: snapshots written */
	unsigned snap_seq;                  /* snapshots tried: the last file's N */
	int snap_dirfd;                     /* --snapshot-dir opened at start, or -1 */
	bool child_released;                /* COMMAND was let go to its exec */
	FILE *out;                          /* where samples are printed: stdout, or
	                                       a snapshot's own file while it runs */
};

/* args.c: 0 = run, 1 = --help/--version printed, 2 = bad arguments
 * (one line on stderr already printed). */
int watch_args_parse(struct watch_args *a, int argc, char **argv);
int watch_args_parse_as(struct watch_args *a, enum watch_prog prog, int argc, char **argv);
const char *watch_prog_name(const struct watch_args *a);
void watch_args_free(struct watch_args *a);
const char *watch_sw_name(enum perfring_software kind);

/* session.c: returns 0 or an exit code (message printed). */
int watch_session_open(struct watch *w);

/* child.c */
int watch_child_spawn(struct watch *w);
void watch_child_release(struct watch *w);
void watch_child_abort(struct watch *w);
void watch_child_reap(struct watch *w);
void watch_child_end(struct watch *w);

/* run.c: signals the loops do not watch (SIGHUP, SIGPIPE), and those
 * held once the run ends. */
void watch_signals_init(void);
void watch_hold_signals(void);
int watch_wait_held(int ms);

/* run.c: the loop glue's side of the contract. */
void watch_loop_opts(struct watch *w, struct perfring_loop_opts *lo);
void watch_started(struct watch *w);
void watch_tick(struct watch *w);
int watch_next_tick_ms(const struct watch *w);
void watch_signal(struct watch *w, int signo);
void watch_child_exited(struct watch *w, int status);
void watch_request_stop(struct watch *w);
void watch_loop_failed(struct watch *w, const char *what, int err);
int watch_finish(struct watch *w);
uint64_t watch_now_ns(void);

/* stats.c */
int watch_cpus_init(struct watch *w);
/* hotplug.c: the session's CPUs (following hotplug, every possible one),
 * the first cap of them into w->cpus (returns how many there are), the
 * open ones marked, and the cpu callback (ctx = w). */
size_t watch_hotplug_list(struct watch *w, size_t cap);
void watch_hotplug_mark(struct watch *w);
void watch_on_cpu(int cpu, bool online, void *ctx);
void watch_cpus_free(struct watch *w);
int watch_on_sample(const struct perfring_sample *smp, void *ctx);
void watch_hist_add(struct watch_hist *h, uint64_t v);
uint64_t watch_hist_pct(const struct watch_hist *h, double q);
void watch_row_interval(const struct watch *w, size_t i, struct watch_row *r);
void watch_interval_reset(struct watch *w);
void watch_row_run(const struct watch *w, size_t i, struct watch_row *r);
void watch_row_total(const struct watch *w, const struct watch_row *rows, bool run,
		     struct watch_row *total);

/* stats.c: the /metrics latency buckets' upper bounds, in ns. */
extern const uint64_t watch_lat_le_ns[WATCH_LAT_BUCKETS];

/* session.c helpers for --by and --filter, in byview.c's side. */
int watch_by_bind(struct watch *w, const char *spec, struct watch_ev *e);
void watch_by_free(struct watch *w);
void watch_by_interval_reset(struct watch *w);

/* byview.c: the --by tables. */
void watch_byview_tty(struct watch *w, double dt);
void watch_byview_pipe(struct watch *w, double t, double dt);
void watch_byview_json(const struct watch *w, bool run, double dt);
void watch_byview_summary(const struct watch *w);

/* bpf.c: the map pinned at path (BPF_OBJ_GET), or -1 with why. */
int watch_bpf_get(const char *path, char *why, size_t len);
/* The BPF_MAP_TYPE_* of a map fd (BPF_OBJ_GET_INFO_BY_FD); -1 when fd is
 * not a BPF map (the session's call then says what it is). */
int watch_bpf_map_type(int fd);
/* --dump: one JSON line with smp's first --dump-bytes payload bytes in hex
 * (WATCH_DUMP_BYTES unless given; at most WATCH_DUMP_BYTES_MAX, which holds
 * any payload: a perf record is under 64 KiB). */
#define WATCH_DUMP_BYTES 32
#define WATCH_DUMP_BYTES_MAX 65535
void watch_bpf_dump(FILE *out, const struct watch_ev *e, const struct perfring_sample *smp);

/* rbview.c: the ring buffers' rows. Each view calls its own form; the
 * interval forms come before the tick resets the baselines. */
void watch_rb_tty(struct watch *w, double dt);
void watch_rb_pipe(struct watch *w, double t, double dt);
void watch_rb_json(const struct watch *w, bool run, double dt);
void watch_rb_summary(const struct watch *w);
void watch_rb_interval_reset(struct watch *w);
/* After stop: what the ring buffers still hold. */
void watch_rb_drain(struct watch *w);

/* print.c: --print. */
int watch_print_open(struct watch *w);
int watch_print_bind(struct watch *w, struct watch_ev *e);
void watch_print_sample(struct watch *w, const struct watch_ev *e,
			const struct perfring_sample *smp);
void watch_print_flush(struct watch *w);
void watch_print_close(struct watch *w);

/* profile.c: --profile, the top user IPs as PATH+0xOFFSET. */
int watch_profile_open(struct watch *w);
void watch_profile_sample(struct watch *w, const struct perfring_sample *smp);
void watch_profile_tty(struct watch *w, double dt);
void watch_profile_pipe(struct watch *w, double t, double dt);
void watch_profile_json(const struct watch *w, bool run, double dt);
void watch_profile_summary(const struct watch *w);
void watch_profile_interval_reset(struct watch *w);
void watch_profile_close(struct watch *w);

/* metrics.c: the /metrics page in *buf (malloc'd, the caller frees
 * it), *len bytes. 0, or -ENOMEM with nothing to free. */
int watch_metrics_page(const struct watch *w, char **buf, size_t *len);

/* http.c (libevent builds): --listen on the loop's event_base.
 * stop: no new connections, the loop breaks once the ones open are answered
 * (2 s at most). */
struct event_base;
int watch_http_start(struct watch *w, struct event_base *base);
void watch_http_stop(struct watch *w);
void watch_http_free(struct watch *w);

/* view.c */
void watch_json_str(const char *s);
void watch_json_fstr(FILE *out, const char *s);
void watch_frame_line(struct watch *w, const char *text);
void watch_view_start(struct watch *w);
void watch_view_interval(struct watch *w, const struct watch_row *rows,
			 const struct watch_row *total, double dt);
void watch_view_summary(struct watch *w, const struct watch_row *rows,
			const struct watch_row *total, double secs, int exit_code);

/* recorder.c: --overwrite. The loop: silent until the snapshot
 * signal; and one snapshot written out (also the final one at the end). */
int watch_loop_recorder(struct watch *w);
void watch_snapshot(struct watch *w);
/* Right after the arguments: the snapshot signal held (an early one waits
 * for the loop), --snapshot-dir opened and checked. 0 or an exit code. */
int watch_recorder_init(struct watch *w);
/* In COMMAND's child before exec: the snapshot signal as it was inherited. */
void watch_recorder_child(const struct watch *w);
void watch_recorder_free(struct watch *w);

/* run.c: fds 0-2 open before anything else is (a closed stdout becomes
 * a pipe without a reader); the child closes them again before its exec. */
void watch_stdio_init(void);
void watch_stdio_child(void);
/* A write to stdout failed with err: EPIPE ends the run as SIGPIPE does,
 * anything else is a failure, what: strerror. */
void watch_output_error(struct watch *w, const char *what, int err);

/* One per loop; each returns 0, or -1 after printing why. */
int watch_loop_epoll(struct watch *w);
int watch_loop_uv(struct watch *w);
int watch_loop_event(struct watch *w);
int watch_loop_ev(struct watch *w);

#endif
