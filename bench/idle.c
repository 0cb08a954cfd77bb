/* SPDX-License-Identifier: MIT */
/*
 * bench/idle: what waiting costs when nothing comes. A getpid session on
 * every online CPU, filtered on this process (which makes no getpid call),
 * runs parse_for_duration for D seconds under each wait mode; the process's
 * voluntary context switches and CPU time are measured around it.
 */
#include "kbench.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct row {
	const char *name;
	uint32_t watermark, flush_ms;
};

static const struct row rows[] = {
	{ "default polling (15 ms)", 0, 0 },
	{ "watermark 4 KiB, default flush (100 ms)", 4096, 0 },
	{ "watermark 4 KiB, PERFRING_FLUSH_NEVER", 4096, PERFRING_FLUSH_NEVER },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

struct idle_run {
	uint64_t nvcsw, cpu_us, ring_wakeups, passes;
};

static void self_usage(uint64_t *nvcsw, uint64_t *cpu_us)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*nvcsw = (uint64_t)ru.ru_nvcsw;
	*cpu_us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ull +
		  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Ring wakeups and timer passes (a pass reads every ring once). */
static void ring_stats(struct perfring_session *s, struct idle_run *r)
{
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st;
	size_t i, n = perfring_session_fds(s, &fds);

	for (i = 0; i < n; i++) {
		if (perfring_session_cpu_stats(s, fds[i].cpu, &st))
			continue;
		r->ring_wakeups += st.wakeups;
		if (st.flushes > r->passes)
			r->passes = st.flushes;
	}
}

static int measure(const struct row *w, uint64_t secs, struct idle_run *r)
{
	struct perfring_opts o = { .sz = sizeof(o), .wakeup_watermark = w->watermark,
				   .flush_ms = w->flush_ms };
	struct perfring_session *s = NULL;
	uint64_t v0, c0, v1, c1;
	struct kb_tally t;
	int err;

	memset(r, 0, sizeof(*r));
	if ((err = kb_tally_init(&t, getpid(), 0)))
		return err;
	if ((err = kb_lpr_session(&o, getpid(), &t, &s)) || (err = perfring_session_start(s))) {
		fprintf(stderr, "idle: %s\n", perfring_session_last_error(s));
		goto out;
	}
	self_usage(&v0, &c0);
	err = perfring_session_parse_for_duration(s, secs * 1000000000ull);
	self_usage(&v1, &c1);
	r->nvcsw = v1 - v0;
	r->cpu_us = c1 - c0;
	ring_stats(s, r);
	if (err > 0)
		fprintf(stderr, "idle: %d unexpected records\n", err);
	err = err < 0 ? err : 0;
out:
	perfring_session_free(s);
	kb_tally_free(&t);
	return err;
}

/* The sleep that ends the window is a wakeup of the measurement, not of the
 * mode: every mode pays exactly one. */
static uint64_t wakeups(const struct idle_run *r)
{
	return r->nvcsw ? r->nvcsw - 1 : 0;
}

static void print_row(const struct row *w, const struct idle_run *r, uint64_t secs)
{
	uint64_t k = wakeups(r);

	kb_report_line("| %s | %llu | %.1f | %llu | %llu | %.0f | %llu | %llu |", w->name,
		       (unsigned long long)k, (double)k / (double)secs,
		       (unsigned long long)r->nvcsw, (unsigned long long)r->cpu_us,
		       k ? (double)r->cpu_us / (double)k : 0.0,
		       (unsigned long long)r->ring_wakeups, (unsigned long long)r->passes);
}

static int parse_secs(int argc, char **argv, uint64_t *secs)
{
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd')
			return -1;
		*secs = strtoull(optarg, NULL, 10);
	}
	if (*secs < 1 || *secs > 3600) {
		fprintf(stderr, "usage: %s [-d seconds per row, 1..3600]\n", argv[0]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct idle_run r[NROWS];
	uint64_t secs = 10;
	char note[512];
	size_t i;

	if (parse_secs(argc, argv, &secs) || kb_setup())
		return 2;
	for (i = 0; i < NROWS; i++) {
		if (measure(&rows[i], secs, &r[i]))
			return 1;
		fprintf(stderr, "idle: %s done\n", rows[i].name);
	}
	snprintf(note, sizeof(note),
		 "%llu s of parse_for_duration per row with no matching event (getpid filtered on "
		 "this process, which makes no getpid call), 64-page rings on every online CPU. "
		 "Wakeups = the process's voluntary context switches in the window, less the one "
		 "sleep that ends it. Target: 0 wakeups with PERFRING_FLUSH_NEVER.",
		 (unsigned long long)secs);
	if (kb_report_begin("Idle cost (bench/idle)", note,
			    "wait mode|wakeups|wakeups / s|voluntary switches|CPU µs|"
			    "CPU µs / wakeup|ring wakeups|timer passes", argc, argv))
		return 1;
	for (i = 0; i < NROWS; i++)
		print_row(&rows[i], &r[i], secs);
	kb_report_line("%s", "");
	kb_report_line("Target (0 wakeups with PERFRING_FLUSH_NEVER): %s (%llu).",
		       wakeups(&r[NROWS - 1]) == 0 ? "met" : "missed",
		       (unsigned long long)wakeups(&r[NROWS - 1]));
	kb_report_end();
	return 0;
}
