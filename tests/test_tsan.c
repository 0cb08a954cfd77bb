/* parse_for_cpu from two threads at once while generators run: on
 * different CPUs, and both on every CPU (R1: one of them at a time parses a
 * ring, the other gets -EBUSY), with a third thread reading the stats (R8).
 * Built with --enable-tsan in CI: it must be race-free. Criterion's runner
 * crashes under TSan, so this one speaks TAP itself. */
#include "kutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define N 20000


struct worker {
	struct perfring_session *s;
	int cpu;
	bool every_cpu;         /* both CPUs in turn, not just cpu */
	uint64_t n, busy;
	volatile int *done;
};

static int count(const struct perfring_sample *smp, void *ctx)
{
	(void)smp;
	(void)ctx;
	return 0;
}

static void *parse_loop(void *arg)
{
	struct worker *w = arg;
	int n;

	kutil_pin(w->cpu);
	for (int turn = 0;; turn++) {
		bool last = __atomic_load_n(w->done, __ATOMIC_ACQUIRE);

		for (int i = 0; i < (last && w->every_cpu ? 2 : 1); i++) {
			n = perfring_session_parse_for_cpu(w->s, w->every_cpu ? (turn + i) % 2 : w->cpu);
			if (n > 0)
				w->n += (uint64_t)n;
			w->busy += n == -EBUSY;
		}
		if (last)
			break;
	}
	return NULL;
}

/* R8: counters read while the rings are parsed, never going back. */
struct reader {
	struct perfring_session *s;
	volatile int *done;
	uint64_t reads, backwards;
};

static void *read_stats(void *arg)
{
	struct reader *r = arg;
	struct perfring_cpu_stats st, prev[2] = { { 0 } };

	while (!__atomic_load_n(r->done, __ATOMIC_ACQUIRE)) {
		for (int cpu = 0; cpu < 2; cpu++) {
			if (perfring_session_cpu_stats(r->s, cpu, &st))
				continue;
			r->backwards += st.records < prev[cpu].records || st.samples < prev[cpu].samples;
			prev[cpu] = st;
			r->reads++;
		}
	}
	return NULL;
}

static int failures;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			printf("# %s:%d: ", __FILE__, __LINE__);          \
			printf(__VA_ARGS__);                              \
			printf("\n");                                     \
			failures++;                                       \
		}                                                         \
	} while (0)

/* 0 pass, 1 fail, 2 skip (reason printed) */
static int parse_for_cpu_in_two_threads(bool every_cpu)
{
	/* 512 pages hold all N records of a CPU, so even a slow (TSan) consumer
	 * loses none: losses are reported late and would blur the count. */
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 512 };
	struct kpinned p[2] = { { 0, N }, { 1, N } };
	struct perfring_cpu_stats st[2];
	struct perfring_session *s;
	struct perfring_event *ev;
	struct kchild c[2];
	struct worker w[2];
	struct reader rd;
	pthread_t t[2], tr;
	volatile int done = 0, rdone = 0;

	char f[96];
	int err;

	if (kutil_ncpu_online() < 2) {
		printf("# needs CPUs 0 and 1 online\n");
		return 2;
	}
	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev))) {
		printf("# %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return kutil_unavailable(err) ? 2 : 1;
	}
	perfring_event_set_callback(ev, count, NULL);
	for (int i = 0; i < 2; i++)
		CHECK(kutil_child_start(&c[i], kutil_pinned_getpid, &p[i]) == 0, "fork");
	snprintf(f, sizeof(f), "common_pid == %d || common_pid == %d", c[0].pid, c[1].pid);
	CHECK(perfring_event_set_filter(ev, f) == 0, "filter");
	if ((err = perfring_session_start(s))) {
		printf("# %s\n", perfring_session_last_error(s));
		for (int i = 0; i < 2; i++)
			kutil_child_wait(&c[i]);
		perfring_session_free(s);
		return kutil_unavailable(err) ? 2 : 1;
	}
	rd = (struct reader){ s, &rdone, 0, 0 };
	CHECK(pthread_create(&tr, NULL, read_stats, &rd) == 0, "thread");
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ s, i, every_cpu, 0, 0, &done };
		CHECK(pthread_create(&t[i], NULL, parse_loop, &w[i]) == 0, "thread");
	}
	for (int i = 0; i < 2; i++)
		kutil_child_go(&c[i]);
	for (int i = 0; i < 2; i++)
		CHECK(kutil_child_wait(&c[i]) == 0, "generator %d", i);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&rdone, 1, __ATOMIC_RELEASE);
	pthread_join(tr, NULL);
	for (int i = 0; i < 2; i++) {
		CHECK(perfring_session_cpu_stats(s, i, &st[i]) == 0, "stats");
		CHECK(every_cpu || st[i].samples == w[i].n, "CPU %d: stats agree with the thread's "
		      "count", i);
	}
	CHECK(st[0].samples + st[1].samples == w[0].n + w[1].n, "stats agree with the threads");
	CHECK(rd.reads > 0 && rd.backwards == 0, "stats read %llu times, %llu went back",
	      (unsigned long long)rd.reads, (unsigned long long)rd.backwards);
	printf("# delivered %llu + %llu, lost %llu, -EBUSY %llu + %llu, stats read %llu times\n",
	       (unsigned long long)w[0].n, (unsigned long long)w[1].n,
	       (unsigned long long)(st[0].lost + st[1].lost), (unsigned long long)w[0].busy,
	       (unsigned long long)w[1].busy, (unsigned long long)rd.reads);
	CHECK(w[0].n + w[1].n == 2 * N && st[0].lost + st[1].lost == 0, "delivered != produced");
	CHECK(w[0].n > 0 && w[1].n > 0, "both CPUs delivered");
	perfring_session_free(s);
	return failures ? 1 : 0;
}

int main(void)
{
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..2\n");
	r = parse_for_cpu_in_two_threads(false);
	printf("%s 1 - concurrency::parse_for_cpu_in_two_threads%s\n", r == 1 ? "not ok" : "ok",
	       r == 2 ? " # SKIP perf unavailable" : "");
	failures = 0;
	r = parse_for_cpu_in_two_threads(true);
	printf("%s 2 - concurrency::two_threads_on_every_cpu_ebusy_and_exact%s\n",
	       r == 1 ? "not ok" : "ok", r == 2 ? " # SKIP perf unavailable" : "");
	return 0;
}
