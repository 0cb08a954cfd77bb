/* Counts sched:sched_switch per CPU on a libuv loop and prints the counts
 * once a second, for SECONDS seconds.
 * usage: uv-watch [SECONDS]   (as root; default 5) */
#include <perfring/perfring-uv.h>

#include <stdio.h>
#include <stdlib.h>

#define MAX_CPUS 4096

struct watch {
	struct perfring_session *s;
	struct perfring_libuv *a;
	uv_timer_t tick;
	int seconds_left;
	unsigned long switches[MAX_CPUS];  /* since the last tick */
};

static int on_switch(const struct perfring_sample *smp, void *ctx)
{
	struct watch *w = ctx;

	if (smp->cpu >= 0 && smp->cpu < MAX_CPUS)
		w->switches[smp->cpu]++;
	return 0;
}

static void on_tick(uv_timer_t *t)
{
	struct watch *w = t->data;
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(w->s, &fds);

	for (i = 0; i < n; i++) {
		printf("cpu%d %6lu  ", fds[i].cpu, w->switches[fds[i].cpu]);
		w->switches[fds[i].cpu] = 0;
	}
	printf("switches/s\n");
	fflush(stdout);
	if (--w->seconds_left > 0)
		return;
	/* Closing our last handles lets uv_run() return. */
	perfring_libuv_detach(w->a, NULL, NULL);
	uv_close((uv_handle_t *)t, NULL);
}

int main(int argc, char **argv)
{
	static struct watch w;
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 4096 };
	uv_loop_t *loop = uv_default_loop();
	struct perfring_event *ev;
	int err;

	w.seconds_left = argc > 1 ? atoi(argv[1]) : 5;
	if ((err = perfring_session_new(&o, &w.s)) ||
	    (err = perfring_session_add_tracepoint(w.s, "sched", "sched_switch", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_switch, &w)) ||
	    (err = perfring_session_start(w.s)) ||
	    (err = perfring_libuv_attach(w.s, loop, NULL, &w.a))) {
		fprintf(stderr, "uv-watch: %s: %s\n", perfring_strerror(err),
			perfring_session_last_error(w.s));
		perfring_session_free(w.s);
		return 1;
	}
	uv_timer_init(loop, &w.tick);
	w.tick.data = &w;
	uv_timer_start(&w.tick, on_tick, 1000, 1000);
	uv_run(loop, UV_RUN_DEFAULT);
	perfring_session_free(w.s);
	return uv_loop_close(loop) != 0;
}
