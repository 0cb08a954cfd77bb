/* SPDX-License-Identifier: MIT */
/*
 * bench/merge: time-ordered reading of K rings, in memory.
 *
 * The same N records of 40 B (IDENTIFIER, TID, TIME, CPU) are spread over K
 * synthetic rings (synth_session_new) in two patterns:
 *   fine    consecutive timestamps alternate between the rings;
 *   coarse  runs of RUN_LEN consecutive timestamps per ring, round robin.
 * and read in time order four ways:
 *   parse_all  the library's perfring_session_parse_all(): a loser tree
 *              picks the oldest ring, whose run is then drained in the
 *              library's fast loop up to the runner-up's time; when no
 *              ring runs, batches of every ring's next records bucketed
 *              by time (core/batch.c);
 *   tree       the same loser tree (pr_tree_*), one record a step, driven by
 *              this file's loop;
 *   linear     scan every ring's head for the oldest on every record
 *              (Falco's libscap);
 *   drain      drain the oldest ring until it passes the second-oldest, then
 *              scan again (one-collect, perfetto);
 *   unordered  parse_for_cpu on each ring in turn: no ordering at all, the
 *              floor every ordered strategy is measured against (not part of
 *              the order check).
 * tree, linear and drain deliver each record through the library's general
 * path (pr_dispatch, pr_key_of: id lookup, decode, stats, the event
 * callback), so between them only the ordering strategy differs; tree vs
 * parse_all shows what the cursors and the drained runs save.
 *
 * The callback reads the time and counts inversions; every run must deliver
 * all N records with none.
 *
 * Usage: bench/merge [--fine|--coarse] [records [K...]]. The default, 1 Mi
 * records (40 MiB, above this machine's 32 MiB L3) at K = 1, 2, 8, 32, 128
 * and 256, keeps the run under 60 s on the 2-core VM: linear and drain cost
 * O(K) a record under fine interleaving.
 */
#include "benchutil.h"
#include "read/deliver.h"
#include "read/merge.h"
#include "event.h"
#include "decode/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RECORDS (1u << 20)
#define MAX_RECORDS (64u << 20)
#define RUN_LEN 1000u
#define REPS 7
#define T0 1000000000ull
#define NO_KEY UINT64_MAX
#define MAX_K 4096
#define MAX_NK 16

enum pattern { P_FINE, P_COARSE, P__N };
enum strategy { S_LIB, S_TREE, S_LINEAR, S_DRAIN, S_UNORDERED, S__N };

static const char *const pattern_name[P__N] = { "fine", "coarse (1,000-record runs)" };
static const char *const strategy_name[S__N] = {
	"parse_all", "tree", "linear", "drain", "unordered"
};

/* What to run: `bench/merge [--fine|--coarse] [records [K...]]`. */
struct cfg {
	bool pattern[P__N];
	uint64_t records;
	size_t ks[MAX_NK];
	size_t nk;
};

struct order {
	uint64_t n, last, inversions;
};

/* Reading state of the local strategies: each ring's current head record
 * and its key (NO_KEY once empty). */
struct heads {
	struct perfring_session *s;
	const struct perf_event_header **h;
	uint64_t *key;
	size_t k;
};

static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	struct order *o = ctx;

	o->inversions += smp->time < o->last;
	o->last = smp->time;
	o->n++;
	return 0;
}

/* ------------------------------------------------ per-record work */

/* The library's general per-record path (deliver.h) serves every local
 * strategy, so that between them only the ordering differs. */
static uint64_t head_key(struct pr_cpu *c, const struct perf_event_header *h)
{
	return h ? pr_key_of(c, h) : NO_KEY;
}

/* Delivers ring i's head and moves on to its next record. */
static void advance(struct heads *hd, size_t i)
{
	struct pr_cpu *c = &hd->s->cpu[i];
	bool stop = false;

	pr_dispatch(c, hd->h[i], &stop);
	pr_ring_consume(&c->ring, hd->h[i]);
	hd->h[i] = pr_peek(c);
	hd->key[i] = head_key(c, hd->h[i]);
}

static void heads_begin(struct heads *hd)
{
	struct pr_cpu *c;
	size_t i;

	for (i = 0; i < hd->k; i++) {
		c = &hd->s->cpu[i];
		pr_begin(c);
		hd->h[i] = pr_peek(c);
		hd->key[i] = head_key(c, hd->h[i]);
	}
}

static void heads_end(struct heads *hd)
{
	size_t i;

	for (i = 0; i < hd->k; i++)
		pr_end(&hd->s->cpu[i]);
}

/* ------------------------------------------------- the strategies */

/* Each strategy stays out of line so that profiles (callgrind) name it. */
#define STRATEGY __attribute__((noinline)) static void

STRATEGY by_tree(struct heads *hd)
{
	struct pr_tree *t = &hd->s->merge->tree;
	const struct pr_tree_ent *w;
	size_t i;

	for (i = 0; i < hd->k; i++)
		pr_tree_set(t, (uint32_t)i, hd->key[i], hd->h[i] != NULL);
	pr_tree_build(t);
	while ((w = pr_tree_winner(t))) {
		i = w->idx;
		advance(hd, i);
		pr_tree_update(t, (uint32_t)i, hd->key[i], hd->h[i] != NULL);
	}
}

/* The oldest head; ties go to the lower index, as in the library's tree.
 * k when every ring is empty. */
static size_t oldest(const struct heads *hd)
{
	uint64_t best = NO_KEY;
	size_t i, at = hd->k;

	for (i = 0; i < hd->k; i++) {
		if (hd->h[i] && (at == hd->k || hd->key[i] < best)) {
			best = hd->key[i];
			at = i;
		}
	}
	return at;
}

STRATEGY by_linear(struct heads *hd)
{
	size_t i;

	while ((i = oldest(hd)) < hd->k)
		advance(hd, i);
}

/* The oldest head (*first) and the second oldest (*second, k if none). */
static void two_oldest(const struct heads *hd, size_t *first, size_t *second)
{
	size_t i, a = hd->k, b = hd->k;

	for (i = 0; i < hd->k; i++) {
		if (!hd->h[i])
			continue;
		if (a == hd->k || hd->key[i] < hd->key[a]) {
			b = a;
			a = i;
		} else if (b == hd->k || hd->key[i] < hd->key[b]) {
			b = i;
		}
	}
	*first = a;
	*second = b;
}

/* Ring a's head goes before ring b's head (k = none: always). */
static inline bool before(const struct heads *hd, size_t a, size_t b)
{
	return b == hd->k || hd->key[a] < hd->key[b] || (hd->key[a] == hd->key[b] && a < b);
}

STRATEGY by_drain(struct heads *hd)
{
	size_t a, b;

	for (;;) {
		two_oldest(hd, &a, &b);
		if (a == hd->k)
			return;
		do
			advance(hd, a);
		while (hd->h[a] && before(hd, a, b));
	}
}

/* ------------------------------------------------------ one run */

struct bed {
	struct synth_session b;
	struct order o;
	struct heads hd;
	size_t k;
	uint64_t records;
};

static int bed_init(struct bed *bed, size_t k, uint64_t records)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
	};
	uint64_t per_ring = (records / k + RUN_LEN) * 40;
	int err;

	memset(bed, 0, sizeof(*bed));
	bed->k = k;
	bed->records = records;
	bed->hd.k = k;
	bed->hd.h = calloc(k, sizeof(*bed->hd.h));
	bed->hd.key = calloc(k, sizeof(*bed->hd.key));
	if (!bed->hd.h || !bed->hd.key)
		err = -ENOMEM;
	else
		err = synth_session_new(&bed->b, k, synth_pow2(per_ring), &a, on_sample,
					      &bed->o);
	if (err) {
		free(bed->hd.h);
		free(bed->hd.key);
		return err;
	}
	bed->hd.s = bed->b.s;
	/* PERFRING_BENCH_WINDOW=NS: parse_all with that order window (its
	 * cost; the records' times, T0 + i, are long past any bound). */
	if (getenv("PERFRING_BENCH_WINDOW"))
		bed->b.s->o.order_window_ns = strtoull(getenv("PERFRING_BENCH_WINDOW"), NULL, 10);
	return 0;
}

static void bed_free(struct bed *bed)
{
	synth_session_free(&bed->b);
	free(bed->hd.h);
	free(bed->hd.key);
}

static size_t ring_of(enum pattern p, uint64_t i, size_t k)
{
	return (size_t)((p == P_FINE ? i : i / RUN_LEN) % k);
}

/* Record i has time T0 + i and goes to ring ring_of(i). */
static int fill(struct bed *bed, enum pattern p)
{
	struct synth_fields f = { .pid = 4242, .tid = 4243 };
	size_t off = synth_time_offset(synth_session_sample_type(&bed->b)), len = 0, r;
	uint8_t *rec = calloc(bed->k, 64);
	uint64_t i;
	int err = rec ? 0 : -ENOMEM;

	synth_session_clear(&bed->b);
	for (r = 0; !err && r < bed->k; r++)
		if ((len = synth_session_template(&bed->b, r, &f, rec + 64 * r, 64)) != 40)
			err = -EINVAL;
	for (i = 0; !err && i < bed->records; i++) {
		r = ring_of(p, i, bed->k);
		err = synth_session_put(&bed->b, r, rec + 64 * r, len, off, T0 + i);
	}
	free(rec);
	return err;
}

/* The floor: every ring drained with parse_for_cpu, one after the other. */
static int unordered(struct bed *bed)
{
	int n = 0, k;
	size_t i;

	for (i = 0; i < bed->k; i++) {
		k = perfring_session_parse_for_cpu(bed->b.s, (int)i);
		if (k < 0)
			return k;
		n += k;
	}
	return n;
}

static int run_strategy(struct bed *bed, enum strategy st)
{
	if (st == S_LIB)
		return perfring_session_parse_all(bed->b.s);
	if (st == S_UNORDERED)
		return unordered(bed);
	heads_begin(&bed->hd);
	if (st == S_TREE)
		by_tree(&bed->hd);
	else if (st == S_LINEAR)
		by_linear(&bed->hd);
	else
		by_drain(&bed->hd);
	heads_end(&bed->hd);
	return (int)bed->o.n;
}

/* Every record, once, in order (but for the unordered floor), and every
 * ring drained. */
static bool run_ok(const struct bed *bed, enum strategy st, int n)
{
	size_t i;

	if (n < 0 || (uint64_t)n != bed->records || bed->o.n != bed->records ||
	    (bed->o.inversions && st != S_UNORDERED))
		return false;
	for (i = 0; i < bed->k; i++)
		if (bed->b.s->cpu[i].ring.tail != synth_head(&bed->b.rings[i]) ||
		    bed->b.s->cpu[i].st.late)
			return false;
	return true;
}

/* ns per record, or negative on a wrong result. */
static double one_run(struct bed *bed, enum strategy st)
{
	uint64_t t0, t1;
	int n;

	synth_session_rewind(&bed->b);
	bed->o = (struct order){ 0 };
	t0 = bench_now_ns();
	n = run_strategy(bed, st);
	t1 = bench_now_ns();
	return run_ok(bed, st, n) ? (double)(t1 - t0) / (double)bed->records : -1;
}

/* Strategies alternate inside each repetition so drift hits all alike. */
static int measure(struct bed *bed, enum pattern p, double med[S__N])
{
	double v[S__N][REPS];
	int r, st;

	for (r = 0; r < REPS; r++) {
		for (st = 0; st < S__N; st++) {
			v[st][r] = one_run(bed, (enum strategy)st);
			if (v[st][r] < 0) {
				fprintf(stderr, "K=%zu %s %s: records missing, repeated or out of "
					"order\n", bed->k, pattern_name[p], strategy_name[st]);
				return -EPROTO;
			}
		}
	}
	for (st = 0; st < S__N; st++)
		med[st] = bench_median(v[st], REPS);
	return 0;
}

/* ------------------------------------------------------- report */

static void report_pattern(const struct cfg *cfg, enum pattern p, double med[MAX_NK][S__N])
{
	const double *m;
	size_t i;

	bench_out("\n### %s interleaving\n\n", pattern_name[p]);
	bench_out("| K | parse_all ns/rec | parse_all M rec/s | of K=%zu | unordered M rec/s | "
		  "tree M rec/s | linear M rec/s | drain M rec/s | parse_all/unordered | "
		  "tree/parse_all | linear/parse_all | drain/parse_all |\n"
		  "|---|---|---|---|---|---|---|---|---|---|---|---|\n", cfg->ks[0]);
	for (i = 0; i < cfg->nk; i++) {
		m = med[i];
		bench_out("| %zu | %.2f | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | "
			  "%.2f | %.2f |\n", cfg->ks[i], m[S_LIB], 1e3 / m[S_LIB],
			  med[0][S_LIB] / m[S_LIB], 1e3 / m[S_UNORDERED], 1e3 / m[S_TREE],
			  1e3 / m[S_LINEAR], 1e3 / m[S_DRAIN], m[S_LIB] / m[S_UNORDERED],
			  m[S_TREE] / m[S_LIB], m[S_LINEAR] / m[S_LIB], m[S_DRAIN] / m[S_LIB]);
	}
}

/* The target's ratio, K=1 time over K=128 time for parse_all, measured in
 * pairs: the two runs alternate, so the drift of this shared machine, which
 * the per-K tables above take minutes apart, hits both alike. Median over
 * REPS pairs; -1 on a wrong result. */
static double paired_keep(const struct cfg *cfg, enum pattern p)
{
	struct bed one, many;
	double v[REPS], a, b;
	int r, err;

	if ((err = bed_init(&one, 1, cfg->records)))
		return -1;
	if ((err = bed_init(&many, 128, cfg->records))) {
		bed_free(&one);
		return -1;
	}
	err = fill(&one, p) || fill(&many, p);
	for (r = 0; !err && r < REPS; r++) {
		a = one_run(&one, S_LIB);
		b = one_run(&many, S_LIB);
		err = a < 0 || b < 0;
		v[r] = err ? 0 : a / b;
	}
	bed_free(&one);
	bed_free(&many);
	return err ? -1 : bench_median(v, REPS);
}

static int report_target(const struct cfg *cfg)
{
	double keep;
	int p;

	bench_out("\nTarget (parse_all at K=128 keeps >= half its K=1 rate; K=1 and K=128 "
		  "run in alternation, median of %d pairs):", REPS);
	for (p = 0; p < P__N; p++) {
		if (!cfg->pattern[p])
			continue;
		keep = paired_keep(cfg, (enum pattern)p);
		if (keep < 0)
			return -EPROTO;
		bench_out(" %s %.2f (%s);", pattern_name[p], keep, keep >= 0.5 ? "met" : "MISSED");
	}
	bench_out("\n");
	return 0;
}

static int run_k(const struct cfg *cfg, size_t ki, double med[P__N][MAX_NK][S__N])
{
	struct bed bed;
	int p, err;

	if ((err = bed_init(&bed, cfg->ks[ki], cfg->records)))
		return err;
	for (p = 0; !err && p < P__N; p++)
		if (cfg->pattern[p] && !(err = fill(&bed, (enum pattern)p)))
			err = measure(&bed, (enum pattern)p, med[p][ki]);
	bed_free(&bed);
	return err;
}

static bool parse_num(const char *arg, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_args(int argc, char **argv, struct cfg *cfg)
{
	static const size_t def_ks[] = { 1, 2, 8, 32, 128, 256 };
	uint64_t v;
	int i = 1;

	cfg->pattern[P_FINE] = cfg->pattern[P_COARSE] = true;
	if (i < argc && (!strcmp(argv[i], "--fine") || !strcmp(argv[i], "--coarse"))) {
		cfg->pattern[argv[i][2] == 'f' ? P_COARSE : P_FINE] = false;
		i++;
	}
	cfg->records = DEFAULT_RECORDS;
	cfg->nk = sizeof(def_ks) / sizeof(def_ks[0]);
	memcpy(cfg->ks, def_ks, sizeof(def_ks));
	if (i < argc && !parse_num(argv[i++], MAX_RECORDS, &cfg->records))
		return -EINVAL;
	if (i < argc)
		cfg->nk = 0;
	for (; i < argc; i++) {
		if (cfg->nk == MAX_NK || !parse_num(argv[i], MAX_K, &v))
			return -EINVAL;
		cfg->ks[cfg->nk++] = (size_t)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static double med[P__N][MAX_NK][S__N];
	struct cfg cfg;
	size_t i;
	int p, err;

	if (parse_args(argc, argv, &cfg)) {
		fprintf(stderr, "usage: %s [--fine|--coarse] [records (1..%u, default %u) "
			"[K (1..%u)...]]\n", argv[0],
			MAX_RECORDS, DEFAULT_RECORDS, MAX_K);
		return 2;
	}
	if ((err = bench_pin_cpu0()))
		fprintf(stderr, "sched_setaffinity(CPU 0): %s; running unpinned\n",
			strerror(-err));
	if ((err = bench_out_open("bench/merge: time-ordered merge of K synthetic rings", argc,
				  argv)))
		return 1;
	for (i = 0; !err && i < cfg.nk; i++)
		err = run_k(&cfg, i, med);
	if (err) {
		fprintf(stderr, "bench/merge: %s\n", strerror(-err));
		bench_out_close();
		return 1;
	}
	bench_out("%llu records of 40 B in total, spread evenly over K rings; median of %d "
		  "repetitions of this thread's CPU time, pinned to CPU 0. \"of K=%zu\": "
		  "parse_all's rate relative to that K. parse_all/unordered: what time order "
		  "costs over draining the rings one by one. The last three ratios: the "
		  "alternative's time over parse_all's (> 1: parse_all is faster).\n",
		  (unsigned long long)cfg.records, REPS, cfg.ks[0]);
	for (p = 0; p < P__N; p++)
		if (cfg.pattern[p])
			report_pattern(&cfg, (enum pattern)p, med[p]);
	if ((err = report_target(&cfg)))
		fprintf(stderr, "bench/merge: K=1 against K=128: %s\n", strerror(-err));
	return bench_out_close() || err ? 1 : 0;
}
