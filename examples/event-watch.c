/* Counts sched:sched_switch per CPU on a libevent loop and prints the counts
 * once a second. usage: event-watch [SECONDS]   (as root) */
#include <perfring/perfring-event.h>

#include <event2/event.h>

#include <stdio.h>
#include <stdlib.h>

struct watch {
	struct perfring_session *s;
	struct perfring_libevent *a;
	struct event *tick;
	unsigned long per_cpu[1024];
	int ticks_left;
};

static int on_switch(const struct perfring_sample *smp, void *ctx)
{
	struct watch *w = ctx;

	if (smp->cpu >= 0 && smp->cpu < 1024)
		w->per_cpu[smp->cpu]++;
	return 0;
}

static void on_error(int cpu, int err, void *ctx)
{
	fprintf(stderr, "event-watch: cpu %d: %s\n", cpu, perfring_strerror(err));
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;
	const struct perfring_cpu_fd *fds;
	size_t i, n = perfring_session_fds(w->s, &fds);

	for (i = 0; i < n; i++)
		printf("cpu%d %8lu  ", fds[i].cpu, w->per_cpu[fds[i].cpu]);
	printf("\n");
	fflush(stdout);
	if (--w->ticks_left == 0) {
		perfring_libevent_detach(w->a); /* removes its events from the base */
		w->a = NULL;
		event_del(w->tick);
	}
}

int main(int argc, char **argv)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = 16384 };
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .on_error = on_error };
	static struct watch w;
	struct perfring_event *ev;
	struct event_base *base = event_base_new();
	struct timeval sec = { 1, 0 };
	int err;

	w.ticks_left = argc > 1 ? atoi(argv[1]) : 5;
	if (!base || w.ticks_left <= 0)
		return 2;
	if ((err = perfring_session_new(&o, &w.s)) ||
	    (err = perfring_session_add_tracepoint(w.s, "sched", "sched_switch", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_switch, &w)) ||
	    (err = perfring_session_start(w.s)) ||
	    (err = perfring_libevent_attach(w.s, base, &lo, &w.a))) {
		fprintf(stderr, "event-watch: %s\n", perfring_session_last_error(w.s));
		perfring_session_free(w.s);
		event_base_free(base);
		return 1;
	}
	w.tick = event_new(base, -1, EV_PERSIST, on_tick, &w);
	if (w.tick && event_add(w.tick, &sec) == 0)
		event_base_dispatch(base); /* returns once nothing is left on it */
	perfring_libevent_detach(w.a); /* no-op (NULL) after the last tick */
	if (w.tick)
		event_free(w.tick);
	event_base_free(base);
	perfring_session_free(w.s);
	return 0;
}
