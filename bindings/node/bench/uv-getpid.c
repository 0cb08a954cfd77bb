/* SPDX-License-Identifier: MIT */
/* The C side of bench/getpid.js: libperfring-uv on a loop of its own, counting
 * one task's getpid samples until every ring reports the task's exit, then
 * one JSON line with the records and the CPU the process used meanwhile.
 * usage: uv-getpid PID WATERMARK PAGES  (prints "ready" once attached) */
#include <perfring/perfring-uv.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

struct bench {
	uint64_t records;
	size_t hups, rings;
	struct perfring_libuv *a;
};

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	((struct bench *)ctx)->records++;
	return 0;
}

static void on_error(int cpu, int err, void *ctx)
{
	struct bench *b = ctx;

	if (err == -EPIPE && ++b->hups == b->rings)
		perfring_libuv_detach(b->a, NULL, NULL);
}

static double cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
	       ru.ru_stime.tv_usec;
}

static int run(struct perfring_session *s, struct bench *b)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error, .ctx = b };
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st;
	uint64_t wakeups = 0, lost = 0;
	uv_loop_t loop;
	double t0;
	size_t i;
	int err;

	if ((err = perfring_session_start(s)) || (err = uv_loop_init(&loop)))
		return err;
	b->rings = perfring_session_fds(s, &fds);
	if ((err = perfring_libuv_attach(s, &loop, &lo, &b->a)))
		return err;
	printf("ready\n");
	fflush(stdout);
	t0 = cpu_us();
	uv_run(&loop, UV_RUN_DEFAULT);
	t0 = cpu_us() - t0;
	for (i = 0; i < b->rings; i++) {
		perfring_session_cpu_stats(s, fds[i].cpu, &st);
		wakeups += st.wakeups;
		lost += st.lost;
	}
	printf("{\"records\":%llu,\"cpu_us\":%.0f,\"wakeups\":%llu,\"lost\":%llu}\n",
	       (unsigned long long)b->records, t0, (unsigned long long)wakeups,
	       (unsigned long long)lost);
	return uv_loop_close(&loop);
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	struct perfring_opts o = { .sz = sizeof(o) };
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: uv-getpid PID WATERMARK PAGES\n");
		return 2;
	}
	o.pid = atoi(argv[1]);
	o.wakeup_watermark = (uint32_t)strtoul(argv[2], NULL, 10);
	o.ring_pages = (uint32_t)strtoul(argv[3], NULL, 10);
	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_sample, &b)) || (err = run(s, &b))) {
		fprintf(stderr, "uv-getpid: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	perfring_session_free(s);
	return 0;
}
