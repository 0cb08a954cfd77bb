/* SPDX-License-Identifier: MIT */
/* perfring-watch: per-CPU counters and delivery-latency histograms.
 * The session keeps bytes, records, wakeups, lost and fill per CPU; this file
 * adds what only the callback can see (samples and their latency) and turns
 * both into per-interval and whole-run rows. */
#include "config.h"
#include "watch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t watch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * WATCH_NS + (uint64_t)ts.tv_nsec;
}

/* Log2 buckets split into WATCH_HIST_SUB linear parts: values below
 * WATCH_HIST_SUB get a bucket each, larger ones a bucket 1/8 to 1/16 wide. */
static unsigned hist_index(uint64_t v)
{
	unsigned msb;

	if (v < WATCH_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - WATCH_HIST_LOG + 1) * WATCH_HIST_SUB +
	       (unsigned)((v >> (msb - WATCH_HIST_LOG)) & (WATCH_HIST_SUB - 1));
}

/* The middle of bucket i, as the value reported for it. */
static uint64_t hist_value(unsigned i)
{
	unsigned shift = i / WATCH_HIST_SUB - 1;
	uint64_t sub = i % WATCH_HIST_SUB;

	if (i < WATCH_HIST_SUB)
		return i;
	return ((WATCH_HIST_SUB + sub) << shift) + ((1ull << shift) >> 1);
}

void watch_hist_add(struct watch_hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->n++;
}

/* The value below which a fraction q of the samples fall; 0 when empty. */
uint64_t watch_hist_pct(const struct watch_hist *h, double q)
{
	uint64_t want = (uint64_t)(q * (double)h->n), seen = 0;

	if (!h->n)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < WATCH_HIST_N; i++) {
		seen += h->b[i];
		if (seen >= want)
			return hist_value(i);
	}
	return hist_value(WATCH_HIST_N - 1);
}

static void hist_merge(struct watch_hist *dst, const struct watch_hist *src)
{
	for (unsigned i = 0; i < WATCH_HIST_N; i++)
		dst->b[i] += src->b[i];
	dst->n += src->n;
}

const uint64_t watch_lat_le_ns[WATCH_LAT_BUCKETS] = {
	10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
	25000000, 50000000, 100000000, 250000000, 500000000, 1000000000, 2500000000ull,
	5000000000ull, 10000000000ull,
};

static void lat_bucket_add(struct watch *w, uint64_t lat)
{
	unsigned i = 0;

	while (i < WATCH_LAT_BUCKETS && lat > watch_lat_le_ns[i])
		i++;
	w->lat_b[i]++;
	w->lat_sum_ns += lat;
}

/* What the events say, beside how they were delivered. */
static void sample_content(struct watch *w, const struct watch_ev *e,
			   const struct perfring_sample *smp)
{
	for (size_t i = 0; i < e->nby; i++)
		fc_count(e->by[i], smp);
	if (w->print)
		watch_print_sample(w, e, smp);
	if (e->dump)
		watch_bpf_dump(w->out, e, smp);
	if (e->profile)
		watch_profile_sample(w, smp);
}

int watch_on_sample(const struct perfring_sample *smp, void *ctx)
{
	const struct watch_ev *e = ctx;
	struct watch *w = e->w;
	uint64_t now = watch_now_ns(), lat = now > smp->time ? now - smp->time : 0;
	struct watch_cpu *c;
	int slot;

	/* A ring buffer has no CPU: its row counts from its own stats. */
	if (e->rb) {
		sample_content(w, e, smp);
		return 0;
	}
	if (smp->cpu < 0 || smp->cpu > w->max_cpu || w->slot_of_cpu[smp->cpu] < 0)
		return 0;
	slot = w->slot_of_cpu[smp->cpu];
	c = &w->cpus[slot];
	c->events++;
	w->ev_cpu_samples[e->idx * w->ncpu + (size_t)slot]++;
	watch_hist_add(&c->sec, lat);
	watch_hist_add(&c->all, lat);
	lat_bucket_add(w, lat);
	sample_content(w, e, smp);
	return 0;
}

/* One watch_cpu per CPU of the started session's set (following hotplug,
 * every possible CPU), sorted, and the cpu -> slot map. */
int watch_cpus_init(struct watch *w)
{
	size_t n = watch_hotplug_list(w, 0);

	w->cpus = calloc(n ? n : 1, sizeof(*w->cpus));
	if (!w->cpus || watch_hotplug_list(w, n) != n)
		return -1;
	w->max_cpu = n ? w->cpus[n - 1].cpu : 0;
	w->slot_of_cpu = malloc((size_t)(w->max_cpu + 1) * sizeof(int));
	w->ev_cpu_samples = calloc((w->nnames ? w->nnames : 1) * (n ? n : 1), sizeof(uint64_t));
	if (!w->slot_of_cpu || !w->ev_cpu_samples)
		return -1;
	memset(w->slot_of_cpu, 0xff, (size_t)(w->max_cpu + 1) * sizeof(int));
	for (size_t i = 0; i < n; i++)
		w->slot_of_cpu[w->cpus[i].cpu] = (int)i;
	w->ncpu = n;
	watch_hotplug_mark(w);
	return 0;
}

void watch_cpus_free(struct watch *w)
{
	free(w->cpus);
	free(w->slot_of_cpu);
	free(w->ev_cpu_samples);
	w->cpus = NULL;
	w->slot_of_cpu = NULL;
	w->ev_cpu_samples = NULL;
}

static void row_fill(struct watch_row *r, int cpu, uint64_t events,
		     const struct perfring_cpu_stats *now, const struct perfring_cpu_stats *base,
		     const struct watch_hist *h)
{
	r->cpu = cpu;
	r->events = events;
	r->bytes = now->bytes - base->bytes;
	r->records = now->records - base->records;
	r->wakeups = now->wakeups - base->wakeups;
	r->lost = now->lost - base->lost;
	r->fill_pct = now->max_fill_pct;
	r->p50_ns = watch_hist_pct(h, 0.50);
	r->p99_ns = watch_hist_pct(h, 0.99);
}

/* CPU slot i since the last tick. */
void watch_row_interval(const struct watch *w, size_t i, struct watch_row *r)
{
	const struct watch_cpu *c = &w->cpus[i];
	struct perfring_cpu_stats st = { 0 };

	perfring_session_cpu_stats(w->s, c->cpu, &st);
	row_fill(r, c->cpu, c->events - c->tick_events, &st, &c->tick, &c->sec);
}

/* Starts the next interval: new baselines, empty interval histograms. The
 * counters cannot move between the rows and this: both run on the loop's
 * thread, which is also the only one that parses. */
void watch_interval_reset(struct watch *w)
{
	for (size_t i = 0; i < w->ncpu; i++) {
		struct watch_cpu *c = &w->cpus[i];

		perfring_session_cpu_stats(w->s, c->cpu, &c->tick);
		c->tick_events = c->events;
		memset(&c->sec, 0, sizeof(c->sec));
	}
	watch_by_interval_reset(w);
	watch_profile_interval_reset(w);
	watch_rb_interval_reset(w);
}

/* CPU slot i since start. */
void watch_row_run(const struct watch *w, size_t i, struct watch_row *r)
{
	const struct watch_cpu *c = &w->cpus[i];
	struct perfring_cpu_stats st = { 0 }, zero = { 0 };

	perfring_session_cpu_stats(w->s, c->cpu, &st);
	row_fill(r, c->cpu, c->events, &st, &zero, &c->all);
}

/* Sums rows; the percentiles come from the CPUs' histograms merged: the
 * whole-run ones when `run`, else this interval's. */
void watch_row_total(const struct watch *w, const struct watch_row *rows, bool run,
		     struct watch_row *t)
{
	struct watch_hist h = { 0 };

	*t = (struct watch_row){ .cpu = -1 };
	for (size_t i = 0; i < w->nrows; i++) {
		const struct watch_cpu *c = &w->cpus[w->slot_of_cpu[rows[i].cpu]];

		t->events += rows[i].events;
		t->bytes += rows[i].bytes;
		t->records += rows[i].records;
		t->wakeups += rows[i].wakeups;
		t->lost += rows[i].lost;
		if (rows[i].fill_pct > t->fill_pct)
			t->fill_pct = rows[i].fill_pct;
		hist_merge(&h, run ? &c->all : &c->sec);
	}
	t->p50_ns = watch_hist_pct(&h, 0.50);
	t->p99_ns = watch_hist_pct(&h, 0.99);
}
