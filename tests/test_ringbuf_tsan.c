/* SPDX-License-Identifier: MIT */
/* A ring buffer parsed from two threads at once while a third makes the
 * program write, and a fourth reads its stats (R1: one parse at a time, the
 * other gets -EBUSY; R8: stats from any thread). Every record is delivered
 * exactly once. Built with --enable-tsan it must be race-free; criterion's
 * runner crashes under TSan, so this one speaks TAP itself. */
#include "kbpf.h"
#include "kutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 20000

struct shared {
	struct perfring_event *ev;
	volatile int done;
	uint64_t delivered;         /* atomic: from both parsers' callbacks */
};

struct parser {
	pthread_t t;
	struct shared *sh;
	uint64_t busy, errors;
};

static int count(const struct perfring_sample *smp, void *ctx)
{
	struct shared *sh = ctx;

	(void)smp;
	__atomic_fetch_add(&sh->delivered, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *parse(void *arg)
{
	struct parser *p = arg;
	int n;

	while (!__atomic_load_n(&p->sh->done, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&p->sh->delivered, __ATOMIC_RELAXED) < N) {
		n = perfring_ringbuf_parse(p->sh->ev, 64, NULL);
		if (n == -EBUSY)
			p->busy++;
		else if (n < 0 && p->errors++ == 0)
			fprintf(stderr, "# parse: %d\n", n);
		if (p->errors > 10)
			break;
	}
	return NULL;
}

static void *stats(void *arg)
{
	struct shared *sh = arg;
	struct perfring_ringbuf_stats st, last = { 0 };
	uint64_t *bad = calloc(1, sizeof(*bad));

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		if (perfring_ringbuf_stats(sh->ev, &st) || st.records < last.records)
			++*bad;
		last = st;
	}
	return bad;
}

static void *produce(void *arg)
{
	struct shared *sh = arg;
	int i;

	for (i = 0; i < N / 100; i++) {
		kutil_getpid_n(100);
		usleep(100);
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	struct perfring_session *s = NULL;
	struct shared sh = { 0 };
	struct parser p[2] = { { .sh = &sh }, { .sh = &sh } };
	struct perfring_ringbuf_stats st;
	pthread_t prod, reader;
	struct kbpf_rb b;
	uint64_t *bad;
	char why[1024];
	int err;

	printf("1..2\n");
	if ((err = kbpf_rb_open(&b, getpid(), 1u << 20, KBPF_RB_OUTPUT, 24, why, sizeof(why)))) {
		printf("ok 1 # SKIP BPF unavailable: %s\nok 2 # SKIP\n", why);
		return 0;
	}
	if ((err = perfring_session_new(NULL, &s)) ||
	    (err = perfring_session_add_bpf_ringbuf(s, b.map, NULL, &sh.ev)) ||
	    (err = perfring_event_set_callback(sh.ev, count, &sh)) ||
	    (err = perfring_session_start(s))) {
		printf("not ok 1 - session: %s\nnot ok 2\n", perfring_session_last_error(s));
		return 1;
	}
	pthread_create(&p[0].t, NULL, parse, &p[0]);
	pthread_create(&p[1].t, NULL, parse, &p[1]);
	pthread_create(&reader, NULL, stats, &sh);
	pthread_create(&prod, NULL, produce, &sh);
	pthread_join(prod, NULL);
	pthread_join(p[0].t, NULL);
	pthread_join(p[1].t, NULL);
	pthread_join(reader, (void **)&bad);
	perfring_ringbuf_stats(sh.ev, &st);
	printf("%s 1 - two parsers: %llu records delivered of %d, stats %llu (-EBUSY %llu + "
	       "%llu, errors %llu)\n", sh.delivered == N && st.records == N &&
	       !p[0].errors && !p[1].errors ? "ok" : "not ok", (unsigned long long)sh.delivered,
	       N, (unsigned long long)st.records, (unsigned long long)p[0].busy,
	       (unsigned long long)p[1].busy, (unsigned long long)(p[0].errors + p[1].errors));
	printf("%s 2 - stats read from a third thread: %llu bad reads\n", *bad ? "not ok" : "ok",
	       (unsigned long long)*bad);
	free(bad);
	perfring_session_free(s);
	kbpf_rb_close(&b);
	return 0;
}
