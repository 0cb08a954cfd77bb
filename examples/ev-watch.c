/* Counts sched:sched_switch per CPU on a libev loop and prints the counts
 * once a second. usage: ev-watch [SECONDS]   (as root) */
#include <perfring/perfring-ev.h>

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>

struct watch {
	struct perfring_session *s;
	struct perfring_libev *a;
	unsigned long per_cpu[1024];
	int left;                       /* seconds still to run */
};

static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct watch *w = ctx;

	if (smp->cpu >= 0 && smp->cpu < 1024)
		w->per_cpu[smp->cpu]++;
	return 0;
}

static void on_error(int cpu, int err, void *ctx)
{
	fprintf(stderr, "ev-watch: cpu %d: %s\n", cpu, perfring_strerror(err));
}

static void on_tick(EV_P_ ev_timer *t, int revents)
{
	struct watch *w = t->data;
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(w->s, &fds);

	for (i = 0; i < n; i++)
		printf("cpu%d %lu%s", fds[i].cpu, w->per_cpu[fds[i].cpu], i + 1 < n ? "  " : "\n");
	fflush(stdout);
	if (--w->left > 0)
		return;
	ev_timer_stop(EV_A_ t);
	perfring_libev_detach(w->a);    /* nothing left active: ev_run returns */
	w->a = NULL;
}

int main(int argc, char **argv)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 16384 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error };
	static struct watch w;
	struct perfring_event *ev;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	ev_timer tick;
	int err;

	w.left = argc > 1 ? atoi(argv[1]) : 5;
	if (!loop) {
		fprintf(stderr, "ev-watch: ev_loop_new failed\n");
		return 1;
	}
	if ((err = perfring_session_new(&o, &w.s)) ||
	    (err = perfring_session_add_tracepoint(w.s, "sched", "sched_switch", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_sample, &w)) ||
	    (err = perfring_session_start(w.s)) ||
	    (err = perfring_libev_attach(w.s, loop, &lo, &w.a))) {
		fprintf(stderr, "ev-watch: %s\n", perfring_session_last_error(w.s));
		perfring_session_free(w.s);
		ev_loop_destroy(loop);
		return 1;
	}
	ev_timer_init(&tick, on_tick, 1.0, 1.0);
	tick.data = &w;
	ev_timer_start(loop, &tick);
	ev_run(loop, 0);
	perfring_libev_detach(w.a);     /* NULL unless the loop stopped early */
	perfring_session_free(w.s);
	ev_loop_destroy(loop);
	return 0;
}
