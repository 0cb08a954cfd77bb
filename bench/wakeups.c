/* SPDX-License-Identifier: MIT */
/*
 * bench/wakeups: what each kernel wakeup setting costs and buys. One fixed
 * getpid stream (generator pinned to CPU 1, consumer on CPU 0, 64-page rings
 * on every online CPU), consumed by libperfring's parse_until under each
 * setting; rows run interleaved, round after round, and the medians are
 * reported. With $PERFRING_PLOT_DATA set, the watermark rows are also
 * written there for bench/plot.gp.
 */
#include "kbench.h"

#include <stdlib.h>
#include <unistd.h>

#define RING_PAGES 64u
#define HALF_RING UINT32_MAX /* resolved with the page size at run time */

struct row {
	const char *name;
	struct kb_lpr_cfg cfg;
};

static const struct row rows[] = {
	{ "default polling (15 ms)", { RING_PAGES, 0, 0, 0, 0 } },
	{ "watermark 64 B", { RING_PAGES, 64, 0, 0, 0 } },
	{ "watermark 1 KiB", { RING_PAGES, 1024, 0, 0, 0 } },
	{ "watermark 4 KiB", { RING_PAGES, 4096, 0, 0, 0 } },
	{ "watermark 16 KiB", { RING_PAGES, 16384, 0, 0, 0 } },
	{ "watermark 64 KiB", { RING_PAGES, 65536, 0, 0, 0 } },
	{ "watermark half the ring", { RING_PAGES, HALF_RING, 0, 0, 0 } },
	{ "wakeup_events 1", { RING_PAGES, 0, 1, 0, 0 } },
	{ "wakeup_events 100", { RING_PAGES, 0, 100, 0, 0 } },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static struct kb_lpr_cfg resolved(const struct row *w)
{
	struct kb_lpr_cfg c = w->cfg;

	if (c.watermark == HALF_RING)
		c.watermark = c.pages * (uint32_t)sysconf(_SC_PAGESIZE) / 2;
	return c;
}

static int run_rounds(long n, int rounds, struct kb_run (*res)[64])
{
	struct kb_lpr_cfg c;
	size_t i;
	int r, err;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NROWS; i++) {
			c = resolved(&rows[i]);
			if ((err = kb_run_lpr(&c, n, &res[i][r])))
				return err;
			kb_run_print(rows[i].name, &res[i][r]);
		}
		fprintf(stderr, "wakeups: round %d/%d done\n", r + 1, rounds);
	}
	return 0;
}

static void print_row(const struct row *w, const struct kb_run *runs, int rounds)
{
	size_t k = (size_t)rounds;

	kb_report_line("| %s | %.2f | %.1f | %.0f | %.0f | %.0f | %.0f |", w->name,
		       kb_median_run(runs, k, kb_get_wakeups_per_k),
		       kb_median_run(runs, k, kb_get_cpu_per_k),
		       kb_median_run(runs, k, kb_get_lost),
		       kb_median_run(runs, k, kb_get_p50),
		       kb_median_run(runs, k, kb_get_p99),
		       kb_median_run(runs, k, kb_get_rate) / 1000.0);
}

static void write_plot_data(struct kb_run (*res)[64], int rounds)
{
	const char *path = getenv("PERFRING_PLOT_DATA");
	size_t i, k = (size_t)rounds;
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "# watermark_bytes wakeups_per_1000 p99_us p50_us\n");
	for (i = 0; i < NROWS; i++) {
		if (!rows[i].cfg.watermark)
			continue;
		fprintf(f, "%u %.4f %.1f %.1f\n", resolved(&rows[i]).watermark,
			kb_median_run(res[i], k, kb_get_wakeups_per_k),
			kb_median_run(res[i], k, kb_get_p99), kb_median_run(res[i], k, kb_get_p50));
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static struct kb_run res[NROWS][64];
	char note[512];
	long n = 60000;
	int rounds = 3;
	size_t i;

	if (kb_parse_args(argc, argv, &n, &rounds, NULL) || kb_setup())
		return 2;
	if (run_rounds(n, rounds, res))
		return 1;
	snprintf(note, sizeof(note),
		 "%ld getpid records per run (sample_period 1, RAW), generator on CPU %d, consumer "
		 "on CPU %d, %u-page rings; medians of %d interleaved rounds. Wakeups are the "
		 "consumer thread's voluntary context switches; CPU is its getrusage(RUSAGE_THREAD); "
		 "latency is CLOCK_MONOTONIC at the callback minus the record's time, on one "
		 "record in %u.", n, KB_GEN_CPU, KB_CONS_CPU, RING_PAGES, rounds, KB_LAT_STRIDE);
	if (kb_report_begin("Wakeup settings (bench/wakeups)", note,
			    "setting|wakeups / 1,000 rec|consumer CPU µs / 1,000 rec|lost|"
			    "p50 µs|p99 µs|generator k rec/s", argc, argv))
		return 1;
	for (i = 0; i < NROWS; i++)
		print_row(&rows[i], res[i], rounds);
	kb_report_end();
	write_plot_data(res, rounds);
	return 0;
}
