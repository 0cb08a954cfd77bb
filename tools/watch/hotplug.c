/* SPDX-License-Identifier: MIT */
/* perfring-watch: CPUs that leave and join (follow_hotplug, the default
 * without -c). Every possible CPU has its counters from the start; the
 * table shows the rows of the CPUs read now, and a line tells each change. */
#include "watch.h"
#include "textesc.h"

#include <stdio.h>
#include <string.h>

/* A following session's CPU set is every possible CPU, and cpu_stats
 * answers for each: they are found without reading sysfs ourselves, and
 * without counting the reactor's slots (ring buffers have slots too). */
size_t watch_hotplug_list(struct watch *w, size_t cap)
{
	struct perfring_cpu_stats st;
	size_t n = 0;

	for (int cpu = 0; cpu < 65536; cpu++) {
		if (perfring_session_cpu_stats(w->s, cpu, &st))
			continue;
		if (n < cap)
			w->cpus[n].cpu = cpu;
		n++;
	}
	return n;
}

/* The CPUs whose rings are open now (all of them without hotplug). */
void watch_hotplug_mark(struct watch *w)
{
	const struct perfring_cpu_fd *fds;
	size_t n = perfring_session_fds(w->s, &fds);

	w->non = 0;
	for (size_t i = 0; i < w->ncpu; i++)
		w->cpus[i].on = false;
	for (size_t i = 0; i < n; i++) {
		int slot = fds[i].cpu <= w->max_cpu ? w->slot_of_cpu[fds[i].cpu] : -1;

		if (slot >= 0) {
			w->cpus[slot].on = w->cpus[slot].ever = true;
			w->non++;
		}
	}
}

static void json_error(const char *why)
{
	char esc[1024];

	esc_text(esc, sizeof(esc), why, strlen(why), ESC_QUOTE);
	printf(",\"error\":\"%s\"", esc);
}

void watch_on_cpu(int cpu, bool online, void *ctx)
{
	struct watch *w = ctx;
	bool was = cpu <= w->max_cpu && w->slot_of_cpu[cpu] >= 0 &&
		   w->cpus[w->slot_of_cpu[cpu]].on;

	watch_hotplug_mark(w);
	if (w->a.json) {
		printf("{\"type\":\"cpu\",\"cpu\":%d,\"online\":%s", cpu, online ? "true" : "false");
		if (!online && !was) /* came online, but its open failed: why */
			json_error(perfring_session_last_error(w->s));
		printf("}\n");
		fflush(stdout);
		return;
	}
	if (online)
		fprintf(stderr, "%s: CPU %d joined: its ring is open and watched\n",
			watch_prog_name(&w->a), cpu);
	else if (was)
		fprintf(stderr, "%s: CPU %d left: its ring was drained and closed\n",
			watch_prog_name(&w->a), cpu);
	else
		fprintf(stderr, "%s: CPU %d came online but is not watched: %s\n",
			watch_prog_name(&w->a), cpu, perfring_session_last_error(w->s));
	w->drawn_lines = 0; /* a terminal's next frame starts below the line */
}
