/* Counts syscalls:sys_enter_getpid samples per CPU for a few seconds.
 * usage: count [SECONDS]   (as root) */
#include <perfring/perfring.h>

#include <stdio.h>
#include <stdlib.h>

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	unsigned long *per_cpu = ctx;

	per_cpu[s->cpu]++;
	return 0;
}

int main(int argc, char **argv)
{
	struct perfring_opts o = { .sz = sizeof(o) };
	const struct perfring_cpu_fd *fds;
	struct perfring_session *s;
	struct perfring_event *ev;
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	static unsigned long per_cpu[65536];
	size_t i, n;
	int err;

	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_tracepoint(s, "syscalls", "sys_enter_getpid", &ev)) ||
	    (err = perfring_event_set_callback(ev, on_sample, per_cpu)) ||
	    (err = perfring_session_start(s))) {
		fprintf(stderr, "count: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	printf("counting syscalls:sys_enter_getpid for %.1f s...\n", secs);
	err = perfring_session_parse_for_duration(s, (uint64_t)(secs * 1e9));
	n = perfring_session_fds(s, &fds);
	for (i = 0; i < n; i++)
		printf("cpu %3d: %lu\n", fds[i].cpu, per_cpu[fds[i].cpu]);
	printf("total:   %d samples\n", err);
	perfring_session_free(s);
	return err < 0;
}
