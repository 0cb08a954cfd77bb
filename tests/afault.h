/* SPDX-License-Identifier: MIT */
/*
 * The driver shared by the adapters' fault-injection tests
 * (tests/test_adapter_faults_*.c). Each test compiles its adapter's source
 * into the program and has the linker wrap (--wrap, tests/adapter-faults.mk)
 * the loop library's calls that can fail; tests/afault.c wraps the allocators
 * of the adapter and of the statically linked core. A wrap asks afault_fail()
 * whether its call fails; calls are counted, and failed, only inside the
 * attach being tested.
 *
 * A fault-free attach (wakeup mode, every online CPU, a flush timer) first
 * counts each kind of call; then, for every kind, every N up to that count and
 * every way the kind can fail, an attach is made with the Nth call of that kind
 * failing. Every case must return the error that failure calls for with *out
 * NULL, let the loop run to its end, leave the fds as they were, leak nothing
 * (LeakSanitizer, in a sanitizer build) and let the same session attach again
 * and deliver AFAULT_SAMPLES getpid samples. The case counts go to stderr,
 * i.e. the .log ("# fault injection ..."): Criterion shows cr_log_info only
 * with --verbose.
 */
#ifndef AFAULT_H
#define AFAULT_H

#include "kutil.h"

#include <stdbool.h>
#include <stddef.h>

#define AFAULT_SAMPLES 25
#define AFAULT_MAX_KINDS 8
#define AFAULT_TIMEOUT_TICKS 10000 /* 1 ms ticks */

/* One way a call fails: the errno it leaves, and what attach must return. */
struct afault_mode { int err, want; };

struct afault_kind {
	const char *name;
	const struct afault_mode *modes;
	int nmodes;
	bool optional; /* attach may make no such call */
};

extern const struct afault_mode afault_enomem[1];

/* The allocator kinds afault.c wraps: in every kinds table, in this order,
 * from ops->alloc on. */
enum afault_alloc { AFAULT_MALLOC, AFAULT_CALLOC, AFAULT_REALLOC, AFAULT_NALLOC };
#define AFAULT_ALLOC_KINDS                              \
	{ "malloc", afault_enomem, 1, true },           \
	{ "calloc", afault_enomem, 1, false },          \
	{ "realloc", afault_enomem, 1, true }

struct perfring_libuv;
struct perfring_libevent;
struct perfring_libev;

/* The start of each loop's fixture, which ops->fx_size bytes hold. */
struct afault_fx {
	struct perfring_session *s;
	struct kcount *k;
	void *loop;     /* set by ops->init */
	union {         /* *out of ops->attach; p tells whether it is NULL */
		void *p;
		struct perfring_libuv *uv;
		struct perfring_libevent *event;
		struct perfring_libev *ev;
	} a;
	long ticks;
	bool timed_out;
};

extern const struct perfring_loop_opts afault_lopts;

struct afault_ops {
	const char *loop; /* "libuv": names it in the messages */
	const struct afault_kind *kinds;
	int nkinds;
	int alloc;        /* the malloc kind's index */
	size_t fx_size;
	void (*init)(struct afault_fx *f);      /* a fresh loop */
	int (*attach)(struct afault_fx *f);
	void (*detach)(struct afault_fx *f);
	/* Runs the loop to its end; false if something kept it going. */
	bool (*settle)(struct afault_fx *f, const char *what);
	/* Runs the loop, ticking every ms, until afault_tick() says to detach. */
	bool (*deliver)(struct afault_fx *f, const char *what);
	bool (*fini)(struct afault_fx *f, const char *what);
};

bool afault_fail(int kind);
/* From a loop's tick: whether to detach, all samples in or timed out. */
bool afault_tick(struct afault_fx *f);

/* The calls a fault-free attach makes, after checking that it works. */
void afault_calls(const struct afault_ops *ops, long seen[AFAULT_MAX_KINDS]);
void afault_run(const struct afault_ops *ops, int kind);
void afault_run_allocators(const struct afault_ops *ops);

#endif
