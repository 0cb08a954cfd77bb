/* SPDX-License-Identifier: MIT */
/* perfring-watch --by: binding each counter to its event, and its table in
 * the three output forms (TTY frame, piped lines, JSON). The counting itself
 * is fieldcount.c's, shared with perfring-exporter. */
#include "config.h"
#include "watch.h"
#include "textesc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_PIPED 10
#define BAR_MAX 24

/* A pointer field holds an address in the traced process: counted as such,
 * but the user is told it is not the string they may have expected. */
static void warn_pointer(const struct watch *w, const char *spec, const struct perfring_field *f)
{
	if (fc_is_pointer(f))
		fprintf(stderr, "%s: --by %s: the field is a pointer (%s); its values are "
			"addresses in the traced process, not the string\n",
			watch_prog_name(&w->a), spec, f->type);
}

/* Binds each --by that names this event. One bound to an earlier event is
 * left alone: parsing it again would zero its counter and leak its table. */
int watch_by_bind(struct watch *w, const char *spec, struct watch_ev *e)
{
	for (size_t i = 0; i < w->a.by_cnt; i++) {
		struct fieldcount *fc = &w->by[i];
		int err;

		if (fc->ev || fc_parse(fc, w->a.by[i]))
			continue;
		if (strcmp(fc->event, spec) || e->nby == WATCH_MAX_BY)
			continue;
		err = fc_bind(fc, e->ev, w->a.max_series);
		if (err == -ENOENT || err == -EINVAL) {
			fprintf(stderr, "%s: --by %s: %s has no field '%s' (its fields are in "
				"/sys/kernel/tracing/events/%.*s/%s/format) (see --help)\n",
				watch_prog_name(&w->a), w->a.by[i], spec, fc->field,
				(int)strcspn(spec, ":"), spec, strchr(spec, ':') + 1);
			return WATCH_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "%s: --by %s: %s\n", watch_prog_name(&w->a), w->a.by[i],
				perfring_strerror(err));
			return WATCH_EXIT_FAIL;
		}
		warn_pointer(w, w->a.by[i], &fc->f);
		e->by[e->nby++] = fc;
		w->nby++;
	}
	return 0;
}

void watch_by_free(struct watch *w)
{
	for (size_t i = 0; i < WATCH_MAX_BY; i++)
		fc_free(&w->by[i]);
	w->nby = 0;
}

void watch_by_interval_reset(struct watch *w)
{
	for (size_t i = 0; i < w->a.by_cnt; i++)
		if (w->by[i].ev)
			fc_interval_reset(&w->by[i]);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void value_text(const struct fieldcount *fc, size_t i, char *buf, size_t len)
{
	esc_text(buf, len, fc->e[i].key, fc->e[i].len, 0);
}

/* ------------------------------------------------------------ TTY */

/* A bar of pct% of width cells: eighth blocks in a UTF-8 locale, else '#'. */
static void bar(char *buf, size_t len, double pct, int width, bool utf8)
{
	static const char *const part[] = { "", "\u258f", "\u258e", "\u258d", "\u258c",
					     "\u258b", "\u258a", "\u2589" };
	int eighths = (int)(pct / 100.0 * width * 8 + 0.5), o = 0;

	buf[0] = '\0';
	if (!utf8) {
		for (int i = 0; i < (eighths + 4) / 8 && o + 2 < (int)len; i++)
			buf[o++] = '#';
		buf[o] = '\0';
	} else {
		for (int i = 0; i < eighths / 8 && o + 4 < (int)len; i++)
			o += snprintf(buf + o, len - (size_t)o, "\u2588");
		if (o + 4 < (int)len)
			snprintf(buf + o, len - (size_t)o, "%s", part[eighths % 8]);
		o = eighths / 8 + (eighths % 8 != 0);
	}
	/* Pad to the width in cells, so the value column lines up. */
	for (size_t n = strlen(buf); o < width && n + 1 < len; o++)
		buf[n++] = ' ', buf[n] = '\0';
}

static void tty_by_row(struct watch *w, uint64_t count, uint64_t total, double dt,
		       const char *value)
{
	char line[1024], b[BAR_MAX * 3 + 8];
	double pct = share(count, total);
	int width = w->frame.cols / 5 < BAR_MAX ? w->frame.cols / 5 : BAR_MAX;

	bar(b, sizeof(b), pct, width, w->frame.utf8);
	snprintf(line, sizeof(line), " %10llu %10.1f %5.1f%% %s %s", (unsigned long long)count,
		 dt > 0 ? (double)count / dt : 0, pct, b, value);
	watch_frame_line(w, line);
}

static void tty_by_table(struct watch *w, const struct fieldcount *fc, size_t n, double dt)
{
	size_t idx[256], k;
	char line[640], v[FC_KEY_MAX * 4 + 1];

	snprintf(line, sizeof(line), "%s:%s: %.0f samples/s, %zu values%s", fc->event, fc->field,
		 dt > 0 ? (double)fc->interval / dt : 0, fc->n,
		 fc->n == fc->max ? " (at --max-series)" : "");
	watch_frame_line(w, line);
	watch_frame_line(w, "      count     rate/s  share");
	if (n > sizeof(idx) / sizeof(idx[0]))
		n = sizeof(idx) / sizeof(idx[0]);
	k = fc_top(fc, true, idx, n);
	for (size_t i = 0; i < k; i++) {
		value_text(fc, idx[i], v, sizeof(v));
		tty_by_row(w, fc->e[idx[i]].interval, fc->interval, dt, v);
	}
	if (fc->other_interval)
		tty_by_row(w, fc->other_interval, fc->interval, dt, "(other)");
}

/* The rows left under the delivery table go to the tables, shared out. */
void watch_byview_tty(struct watch *w, double dt)
{
	int left = w->frame.rows - 1 - w->drawn_lines;
	size_t n;

	if (!w->nby)
		return;
	/* Each table also takes a blank line, its title, its heads and "other". */
	n = w->a.top ? w->a.top : left / (int)w->nby > 5 ? (size_t)(left / (int)w->nby - 4) : 1;
	for (size_t i = 0; i < w->a.by_cnt; i++) {
		if (!w->by[i].ev)
			continue;
		watch_frame_line(w, "");
		tty_by_table(w, &w->by[i], n, dt);
	}
}

/* ------------------------------------------------------------ piped */

static void pipe_by_row(const struct fieldcount *fc, double t, double dt, uint64_t count,
			const char *value)
{
	printf("%8.1f   by %s:%s %10llu %11.1f %6.1f%% %s\n", t, fc->event, fc->field,
	       (unsigned long long)count, dt > 0 ? (double)count / dt : 0,
	       share(count, fc->interval), value);
}

void watch_byview_pipe(struct watch *w, double t, double dt)
{
	size_t idx[TOP_PIPED * 100], n = w->a.top ? w->a.top : TOP_PIPED;
	char v[FC_KEY_MAX * 4 + 1];

	if (n > sizeof(idx) / sizeof(idx[0]))
		n = sizeof(idx) / sizeof(idx[0]);
	for (size_t i = 0; i < w->a.by_cnt; i++) {
		const struct fieldcount *fc = &w->by[i];
		size_t k;

		if (!fc->ev)
			continue;
		k = fc_top(fc, true, idx, n);
		for (size_t j = 0; j < k; j++) {
			value_text(fc, idx[j], v, sizeof(v));
			pipe_by_row(fc, t, dt, fc->e[idx[j]].interval, v);
		}
		if (fc->other_interval)
			pipe_by_row(fc, t, dt, fc->other_interval, "(other)");
	}
}

/* ------------------------------------------------------------ JSON */

static void json_value(const struct fieldcount *fc, size_t i)
{
	char v[FC_KEY_MAX * 4 + 1];

	value_text(fc, i, v, sizeof(v));
	watch_json_str(v);
}

static void json_by_rows(const struct fieldcount *fc, bool run, double dt, size_t n)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), k;
	uint64_t whole = run ? fc->total : fc->interval;

	k = idx ? fc_top(fc, !run, idx, n) : 0;
	for (size_t j = 0; j < k; j++) {
		uint64_t c = run ? fc->e[idx[j]].total : fc->e[idx[j]].interval;

		printf("%s{\"value\":", j ? "," : "");
		json_value(fc, idx[j]);
		printf(",\"count\":%llu,", (unsigned long long)c);
		if (!run)
			printf("\"rate\":%.1f,", dt > 0 ? (double)c / dt : 0);
		printf("\"share\":%.4f}", share(c, whole) / 100);
	}
	free(idx);
}

/* run: the whole run, every value kept; else this interval's top rows. */
void watch_byview_json(const struct watch *w, bool run, double dt)
{
	bool first = true;

	printf(",\"by\":[");
	for (size_t i = 0; i < w->a.by_cnt; i++) {
		const struct fieldcount *fc = &w->by[i];

		if (!fc->ev)
			continue;
		printf("%s{\"event\":", first ? "" : ",");
		watch_json_str(fc->event);
		printf(",\"field\":");
		watch_json_str(fc->field);
		printf(",\"total\":%llu,\"other\":%llu,\"values\":%zu,\"unreadable\":%llu,\"%s\":[",
		       (unsigned long long)(run ? fc->total : fc->interval),
		       (unsigned long long)(run ? fc->other_total : fc->other_interval), fc->n,
		       (unsigned long long)fc->unreadable, run ? "rows" : "top");
		json_by_rows(fc, run, dt, run ? fc->n : w->a.top ? w->a.top : TOP_PIPED);
		printf("]}");
		first = false;
	}
	printf("]");
}

/* ------------------------------------------------------------ summary */

void watch_byview_summary(const struct watch *w)
{
	size_t idx[TOP_PIPED];
	char v[FC_KEY_MAX * 4 + 1];

	for (size_t i = 0; i < w->a.by_cnt; i++) {
		const struct fieldcount *fc = &w->by[i];
		size_t k;

		if (!fc->ev)
			continue;
		printf("by %s:%s: %llu samples, %zu values, %llu other\n", fc->event, fc->field,
		       (unsigned long long)fc->total, fc->n, (unsigned long long)fc->other_total);
		k = fc_top(fc, false, idx, TOP_PIPED);
		for (size_t j = 0; j < k; j++) {
			value_text(fc, idx[j], v, sizeof(v));
			printf("  %10llu %5.1f%% %s\n", (unsigned long long)fc->e[idx[j]].total,
			       share(fc->e[idx[j]].total, fc->total), v);
		}
	}
}
