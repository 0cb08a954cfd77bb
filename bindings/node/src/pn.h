/* SPDX-License-Identifier: MIT */
/* The addon's shared types: one native watch, and what its files share. */
#ifndef PN_H
#define PN_H

#include <node_api.h>
#include <perfring/perfring-uv.h>

#include "spawn.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tracepoint field the watch decodes, in tracefs format order. The
 * library's strings are the session's; fields are decoded after close()
 * too (a kept Sample), so the name is a copy (f.name points to it) and
 * f.type is NULL. */
struct pn_field {
	struct perfring_field f;
	char *name;
};

/* One event of a watch: the sample callback's context. */
struct pn_event {
	struct pn_watch *w;
	struct perfring_event *ev;
	char *name;                /* as the caller spelt it */
	struct pn_field *fields;
	size_t field_n;
};

/* A sample buffered during a drain; its RAW bytes sit in pn_buf.raw. The
 * batch's ArrayBuffer is these 32-byte headers, then the RAW arena: index.js
 * reads them with typed arrays (Uint32Array: ev, cpu, pid, tid, raw_off,
 * raw_size at 0-3 and 6-7; BigUint64Array: time at 2), so the layout is
 * fixed and native-endian. raw_off is from the arena's start. */
struct pn_rec {
	uint32_t ev;
	uint32_t cpu;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t raw_off;
	uint32_t raw_size;
};

#define PN_REC_SIZE 32
_Static_assert(sizeof(struct pn_rec) == PN_REC_SIZE, "index.js reads 32-byte headers");

struct pn_buf {
	struct pn_rec *rec;
	size_t n, cap;
	unsigned char *raw;
	size_t raw_n, raw_cap;
	uint64_t dropped;          /* samples no memory could be found for */
};

/* Options read from JavaScript (pn_opts_read). */
struct pn_opts {
	char **events;
	size_t event_n;
	int pid;
	int *cpus;
	size_t cpu_n;
	uint32_t watermark, flush_ms, pages;
	bool watermark_set;
	char **command;            /* NULL-terminated argv, or NULL */
	size_t command_n;
	uint64_t order_window_ns;
};

struct pn_cpu_stats {
	int cpu;
	struct perfring_cpu_stats st;
};

#define PN_MAX_CPUS 8192        /* Linux's NR_CPUS at most */

/* A returning CPU whose open failed, to be emitted as an 'error'. */
struct pn_cpu_fail {
	int cpu, err;
	char why[512];
};

/* The command a watch started (child.c); it outlives the watch. */
struct pn_child {
	napi_env env;
	struct pn_watch *w;        /* NULL once the watch is freed */
	struct pr_spawn sp;
	int pidfd;                 /* -1 where the kernel has no pidfd_open */
	union { uv_handle_t handle; uv_poll_t poll; uv_timer_t timer; } h;
	bool polling, teardown;    /* polling: h is initialised */
	siginfo_t si;              /* the exit, from waitid */
	int wait_err;
	napi_ref resolve, reject;  /* the `exited` promise's, until it is settled */
	napi_ref promise;
	napi_async_context actx;
	napi_async_cleanup_hook_handle hook;
};

struct pn_watch {
	napi_env env;
	int refs;                  /* the JS handle, and the open session */
	bool closing, teardown, ended, end_told;
	int ring_err, ring_err_cpu;
	struct perfring_session *s;
	struct perfring_libuv *a;
	uv_loop_t *loop;
	uv_check_t check;          /* hands the buffered samples to JS */
	int closes;                /* the check handle and the adapter, closing */
	struct pn_event *ev;
	size_t ev_n, max_fields;
	struct pn_buf buf;
	size_t hup_left;
	uv_handle_t **handles;     /* the adapter's handles, for ref/unref */
	size_t handle_n;
	bool unrefed;
	napi_ref on_samples, on_notify;
	napi_async_context actx;
	napi_deferred closed;
	napi_ref closed_promise;
	napi_async_cleanup_hook_handle hook;
	struct pn_cpu_stats *last;
	size_t last_n;
	uint64_t cpu_on[PN_MAX_CPUS / 64]; /* following: the CPUs open now */
	struct pn_cpu_fail *fails;
	size_t fail_n, fail_cap, fail_lost;
	struct pn_child *child;    /* the `command`, while it runs */
	int command_pid;           /* its pid, 0 without a command */
};

/* error.c */
napi_value pn_throw(napi_env env, int err, const char *sentence);
int pn_einval(napi_env env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pn_enomem(napi_env env);
napi_value pn_error_value(napi_env env, int err, const char *sentence);
napi_value pn_error_cpu(napi_env env, int err, const char *sentence, int cpu);

/* opts.c */
int pn_opts_read(napi_env env, napi_value obj, struct pn_opts *o);
void pn_opts_free(struct pn_opts *o);

/* format.c */
int pn_event_fields(struct pn_event *e, const char *system, const char *name);

/* session.c */
int pn_session_open(napi_env env, struct pn_watch *w, const struct pn_opts *o);

/* buf.c */
int pn_buf_push(struct pn_buf *b, uint32_t ev, const struct perfring_sample *s);
void pn_buf_reset(struct pn_buf *b);
void pn_buf_free(struct pn_buf *b);

/* js.c */
napi_value pn_batch_js(struct pn_watch *w);
napi_value pn_layouts_js(napi_env env, const struct pn_watch *w);
napi_value pn_fields_js(napi_env env, const struct pn_event *e, const void *raw, uint32_t size);
napi_value pn_stats_js(napi_env env, const struct pn_cpu_stats *st, size_t n);

/* watch.c */
struct pn_watch *pn_watch_new(napi_env env, napi_value opts, napi_value on_samples,
			      napi_value on_notify);
void pn_watch_close(struct pn_watch *w);
void pn_watch_pending(struct pn_watch *w);
void pn_watch_unref(struct pn_watch *w);
size_t pn_watch_stats(struct pn_watch *w, struct pn_cpu_stats **out);
void pn_watch_set_ref(struct pn_watch *w, bool ref);
void pn_watch_notify(struct pn_watch *w, const char *what, napi_value arg);

/* cpus.c */
int pn_cpus_follow(struct pn_watch *w);
void pn_cpus_started(struct pn_watch *w);
void pn_cpus_tell(struct pn_watch *w);

/* child.c */
int pn_child_spawn(napi_env env, struct pn_watch *w, char *const argv[]);
int pn_child_release(napi_env env, struct pn_watch *w, const char *prog);
void pn_child_abort(struct pn_watch *w);
napi_value pn_child_exited(napi_env env, struct pn_watch *w);
void pn_child_set_ref(struct pn_watch *w, bool ref);
void pn_child_detach(struct pn_watch *w);

/* handles.c */
int pn_handles_before(uv_loop_t *loop, uv_handle_t ***set, size_t *n);
int pn_handles_new(uv_loop_t *loop, uv_handle_t **before, size_t before_n,
		   uv_handle_t ***out, size_t *n);

#endif
