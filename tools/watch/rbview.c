/* SPDX-License-Identifier: MIT */
/* perfring-watch --bpf-map on a BPF_MAP_TYPE_RINGBUF: one ring buffer is not
 * a CPU's ring, so it gets a row of its own in every form (TTY frame, piped
 * lines, JSON, the summary): its records, bytes and discarded records, from
 * perfring_ringbuf_stats(). The kernel counts no drops for a ring buffer (a
 * failed reserve is the program's to count), so there is no "lost" column. */
#include "config.h"
#include "watch.h"
#include "textesc.h"

#include <stdio.h>
#include <string.h>

static struct perfring_ringbuf_stats rb_now(const struct watch_rb *rb)
{
	struct perfring_ringbuf_stats st = { 0 };

	perfring_ringbuf_stats(rb->e->ev, &st);
	return st;
}

/* Since the last tick (run: since start). */
static struct perfring_ringbuf_stats rb_delta(const struct watch_rb *rb, bool run)
{
	struct perfring_ringbuf_stats st = rb_now(rb);

	if (run)
		return st;
	st.records -= rb->tick.records;
	st.bytes -= rb->tick.bytes;
	st.discarded -= rb->tick.discarded;
	st.untimed -= rb->tick.untimed;
	st.wakeups -= rb->tick.wakeups;
	return st;
}

static double rate(uint64_t v, double dt)
{
	return dt > 0 ? (double)v / dt : 0;
}

/* The pin, safe to show: a path is the user's, but may hold any byte. */
static void rb_name(const struct watch_rb *rb, char *buf, size_t len)
{
	esc_text(buf, len, rb->path, strlen(rb->path), 0);
}

void watch_rb_tty(struct watch *w, double dt)
{
	char line[1024], name[512];

	if (!w->nrb)
		return;
	watch_frame_line(w, "");
	watch_frame_line(w, " records/s    bytes/s  discarded/s  ring buffer");
	for (size_t i = 0; i < w->nrb; i++) {
		struct perfring_ringbuf_stats d = rb_delta(&w->rbs[i], false);

		rb_name(&w->rbs[i], name, sizeof(name));
		snprintf(line, sizeof(line), " %9.0f %10.0f %12.1f  %s", rate(d.records, dt),
			 rate(d.bytes, dt), rate(d.discarded, dt), name);
		watch_frame_line(w, line);
	}
}

void watch_rb_pipe(struct watch *w, double t, double dt)
{
	char name[512];

	for (size_t i = 0; i < w->nrb; i++) {
		struct perfring_ringbuf_stats d = rb_delta(&w->rbs[i], false);

		rb_name(&w->rbs[i], name, sizeof(name));
		printf("%8.1f   ringbuf %11.0f %11.0f %10.1f %s\n", t, rate(d.records, dt),
		       rate(d.bytes, dt), rate(d.discarded, dt), name);
	}
}

/* ,"ringbufs":[...] after the CPU rows: counts over the interval (rates
 * too) or, for the summary, since start. */
void watch_rb_json(const struct watch *w, bool run, double dt)
{
	if (!w->nrb)
		return;
	printf(",\"ringbufs\":[");
	for (size_t i = 0; i < w->nrb; i++) {
		struct perfring_ringbuf_stats d = rb_delta(&w->rbs[i], run);

		printf("%s{\"map\":", i ? "," : "");
		watch_json_str(w->rbs[i].path);
		printf(",\"records\":%llu,\"bytes\":%llu,\"discarded\":%llu,\"untimed\":%llu,"
		       "\"wakeups\":%llu", (unsigned long long)d.records,
		       (unsigned long long)d.bytes, (unsigned long long)d.discarded,
		       (unsigned long long)d.untimed, (unsigned long long)d.wakeups);
		if (!run)
			printf(",\"records_per_s\":%.1f,\"bytes_per_s\":%.1f", rate(d.records, dt),
			       rate(d.bytes, dt));
		printf("}");
	}
	printf("]");
}

void watch_rb_summary(const struct watch *w)
{
	char name[512];

	for (size_t i = 0; i < w->nrb; i++) {
		struct perfring_ringbuf_stats d = rb_delta(&w->rbs[i], true);

		rb_name(&w->rbs[i], name, sizeof(name));
		printf("  ringbuf %s: %llu records, %llu bytes, %llu discarded, %llu wakeups\n",
		       name, (unsigned long long)d.records, (unsigned long long)d.bytes,
		       (unsigned long long)d.discarded, (unsigned long long)d.wakeups);
	}
}

void watch_rb_interval_reset(struct watch *w)
{
	for (size_t i = 0; i < w->nrb; i++)
		w->rbs[i].tick = rb_now(&w->rbs[i]);
}

/* After stop: the loop is gone, so what was committed since its last drain
 * is read here (the CPUs' rings are read by the caller). */
void watch_rb_drain(struct watch *w)
{
	for (size_t i = 0; i < w->nrb; i++)
		perfring_ringbuf_parse(w->rbs[i].e->ev, 0, NULL);
}
