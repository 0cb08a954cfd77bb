/* SPDX-License-Identifier: MIT */
/* perfring-watch: output. Three forms of the same rows: a table redrawn in
 * place on a TTY (ANSI cursor-up and erase-line, no curses; each frame is
 * built whole, cut to the terminal's size and written at once), plain lines
 * when piped, and one JSON object per line with --json. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* 79 columns: an 80-column terminal shows it whole. */
#define COLS_TTY " CPU  events/s    bytes/s wakeups/s rec/wakeup   lost fill%%       p50       p99"
#define COLS_PIPE "#  time   cpu    events/s     bytes/s  wakeups/s  rec/wakeup      lost  fill%%      p50_ns      p99_ns"

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < WATCH_NS)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

static void fmt_bytes(char *buf, size_t len, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (b >= 1024 && u < 4)
		b /= 1024, u++;
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

static double per_s(uint64_t v, double dt)
{
	return dt > 0 ? (double)v / dt : 0;
}

static double rec_per_wakeup(const struct watch_row *r)
{
	return r->wakeups ? (double)r->records / (double)r->wakeups : 0;
}

/* The drain interval in effect: the session's defaults when not given. */
static uint32_t flush_ms(const struct watch_args *a)
{
	if (a->flush_ms)
		return a->flush_ms;
	return a->watermark || a->wakeup_events ? 100 : 15;
}

static void fmt_mode(const struct watch *w, char *buf, size_t len)
{
	const struct watch_args *a = &w->a;
	bool wakeups = a->watermark || a->wakeup_events;
	uint32_t flush = flush_ms(a);
	int n;

	if (a->watermark)
		n = snprintf(buf, len, "watermark %u B", a->watermark);
	else if (a->wakeup_events)
		n = snprintf(buf, len, "wakeup every %u events", a->wakeup_events);
	else
		n = snprintf(buf, len, "no wakeups");
	if (n < 0 || (size_t)n >= len)
		return;
	if (flush == PERFRING_FLUSH_NEVER)
		snprintf(buf + n, len - (size_t)n, ", no flush");
	else
		snprintf(buf + n, len - (size_t)n, ", %s %u ms", wakeups ? "flush" : "poll", flush);
}

static void fmt_cpus(const struct watch *w, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < w->ncpu && used < len; i++) {
		size_t j = i;

		while (j + 1 < w->ncpu && w->cpus[j + 1].cpu == w->cpus[j].cpu + 1)
			j++;
		used += (size_t)snprintf(buf + used, len - used, j > i ? "%s%d-%d" : "%s%d",
					 i ? "," : "", w->cpus[i].cpu, w->cpus[j].cpu);
		i = j;
	}
}

static void fmt_events(const struct watch *w, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < w->nnames && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", w->names[i]);
}

/* ------------------------------------------------------------ JSON */

void watch_json_fstr(FILE *out, const char *s)
{
	putc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

void watch_json_str(const char *s)
{
	watch_json_fstr(stdout, s);
}

static void json_start(const struct watch *w)
{
	const struct watch_args *a = &w->a;

	printf("{\"type\":\"start\",\"loop\":\"%s\",\"wakeup\":\"%s\",\"watermark_bytes\":%u,"
	       "\"wakeup_events\":%u,\"flush_ms\":%u,\"budget\":%u,\"ring_pages\":%u,\"cpus\":[",
	       w->loop_name, a->watermark ? "watermark" : a->wakeup_events ? "events" : "none",
	       a->watermark, a->wakeup_events, flush_ms(a), a->budget, a->pages ? a->pages : 64);
	for (size_t i = 0; i < w->ncpu; i++)
		printf("%s%d", i ? "," : "", w->cpus[i].cpu);
	printf("],\"event_names\":[");
	for (size_t i = 0; i < w->nnames; i++) {
		printf(i ? "," : "");
		watch_json_str(w->names[i]);
	}
	printf("],\"user_only\":%s,\"pid\":%d}\n", w->user_only ? "true" : "false",
	       w->child ? (int)w->child : a->pid);
}

static void json_rate_row(const struct watch_row *r, double dt)
{
	if (r->cpu >= 0)
		printf("{\"cpu\":%d,", r->cpu);
	else
		printf("{");
	printf("\"events_per_s\":%.1f,\"bytes_per_s\":%.1f,\"wakeups_per_s\":%.2f,",
	       per_s(r->events, dt), per_s(r->bytes, dt), per_s(r->wakeups, dt));
	if (r->wakeups)
		printf("\"records_per_wakeup\":%.2f,", rec_per_wakeup(r));
	else
		printf("\"records_per_wakeup\":null,");
	printf("\"lost\":%llu,\"fill_pct\":%u,\"p50_ns\":%llu,\"p99_ns\":%llu}",
	       (unsigned long long)r->lost, r->fill_pct, (unsigned long long)r->p50_ns,
	       (unsigned long long)r->p99_ns);
}

static void json_count_fields(const struct watch_row *r)
{
	printf("\"events\":%llu,\"records\":%llu,\"bytes\":%llu,\"wakeups\":%llu,\"lost\":%llu,"
	       "\"max_fill_pct\":%u,\"p50_ns\":%llu,\"p99_ns\":%llu",
	       (unsigned long long)r->events, (unsigned long long)r->records,
	       (unsigned long long)r->bytes, (unsigned long long)r->wakeups,
	       (unsigned long long)r->lost, r->fill_pct, (unsigned long long)r->p50_ns,
	       (unsigned long long)r->p99_ns);
}

static void json_interval(const struct watch *w, const struct watch_row *rows,
			  const struct watch_row *total, double dt)
{
	printf("{\"type\":\"interval\",\"time_s\":%.3f,\"interval_s\":%.3f,\"cpus\":[",
	       (double)(watch_now_ns() - w->t0_ns) / 1e9, dt);
	for (size_t i = 0; i < w->nrows; i++) {
		printf(i ? "," : "");
		json_rate_row(&rows[i], dt);
	}
	printf("],\"total\":");
	json_rate_row(total, dt);
	watch_rb_json(w, false, dt);
	if (w->nby)
		watch_byview_json(w, false, dt);
	watch_profile_json(w, false, dt);
	printf("}\n");
}

static void json_summary(const struct watch *w, const struct watch_row *rows,
			 const struct watch_row *total, double secs, int code)
{
	printf("{\"type\":\"summary\",\"loop\":\"%s\",\"duration_s\":%.3f,", w->loop_name, secs);
	json_count_fields(total);
	printf(",\"cpus\":[");
	for (size_t i = 0; i < w->nrows; i++) {
		printf("%s{\"cpu\":%d,", i ? "," : "", rows[i].cpu);
		json_count_fields(&rows[i]);
		printf("}");
	}
	printf("]");
	watch_rb_json(w, true, secs);
	if (w->nby)
		watch_byview_json(w, true, secs);
	watch_profile_json(w, true, secs);
	printf(",\"exit_code\":%d", code);
	if (w->child > 0 && WIFEXITED(w->child_status))
		printf(",\"command_status\":%d", WEXITSTATUS(w->child_status));
	else if (w->child > 0 && WIFSIGNALED(w->child_status))
		printf(",\"command_signal\":%d", WTERMSIG(w->child_status));
	printf(",\"signal\":%d}\n", w->signo);
}

/* ------------------------------------------------------------ text */

static void frame_put(struct watch_frame *f, const char *s, size_t n)
{
	if (f->len + n > f->cap) {
		size_t cap = (f->len + n) * 2;
		char *b = realloc(f->buf, cap);

		if (!b)
			return;     /* this frame comes out short; the next one is whole */
		f->buf = b;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, s, n);
	f->len += n;
}

/* One line of the frame, cut to cols - 1 cells (a UTF-8 sequence is one
 * cell; every other byte is ASCII by then) and dropped past the last row
 * but one, so nothing wraps or scrolls. */
void watch_frame_line(struct watch *w, const char *text)
{
	struct watch_frame *f = &w->frame;
	size_t n = 0;
	int cells = 0;

	if (w->drawn_lines >= f->rows - 1)
		return;
	for (; text[n]; n++) {
		if (((unsigned char)text[n] & 0xc0) == 0x80)
			continue;
		if (cells == f->cols - 1)
			break;
		cells++;
	}
	frame_put(f, text, n);
	frame_put(f, "\033[K\n", 4);
	w->drawn_lines++;
}

__attribute__((format(printf, 2, 3)))
static void line(struct watch *w, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (w->tty) {
		watch_frame_line(w, buf);
		return;
	}
	puts(buf);
	w->drawn_lines++;
}

static void frame_size(struct watch *w)
{
	struct winsize ws;

	w->frame.cols = 80;
	w->frame.rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		w->frame.cols = ws.ws_col;
		w->frame.rows = ws.ws_row;
	}
}

/* The whole frame in one write: the terminal never shows half of one. */
static void frame_write(struct watch *w)
{
	struct watch_frame *f = &w->frame;
	size_t off = 0;

	frame_put(f, "\033[J", 3);
	fflush(stdout);
	while (off < f->len) {
		ssize_t r = write(STDOUT_FILENO, f->buf + off, f->len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	f->len = 0;
}

static void text_header(struct watch *w, double elapsed)
{
	char mode[96], budget[32] = "", cpus[256], events[1024];

	fmt_mode(w, mode, sizeof(mode));
	if (w->a.budget)
		snprintf(budget, sizeof(budget), ", budget %u", w->a.budget);
	fmt_cpus(w, cpus, sizeof(cpus));
	fmt_events(w, events, sizeof(events));
	if (w->tty)
		line(w, "perfring-watch: loop %s, %s%s, CPUs %s, %.0f s", w->loop_name, mode,
		     budget, cpus, elapsed);
	else
		line(w, "# perfring-watch: loop %s, %s%s, CPUs %s", w->loop_name, mode, budget,
		     cpus);
	line(w, "%sevents: %s", w->tty ? "" : "# ", events);
	if (w->child)
		line(w, "%scommand: %s (pid %d)", w->tty ? "" : "# ", w->a.command[0],
		     (int)w->child);
	else if (w->a.pid)
		line(w, "%sprocess: pid %d", w->tty ? "" : "# ", w->a.pid);
	if (w->user_only)
		line(w, "%snot privileged: user-only events (exclude_kernel)%s", w->tty ? "" : "# ",
		     w->a.tp_cnt ? "; tracepoints need root" : "");
}

static void tty_row(struct watch *w, const struct watch_row *r, double dt)
{
	char cpu[16], bytes[24], p50[24], p99[24], rpw[24] = "-";

	snprintf(cpu, sizeof(cpu), r->cpu >= 0 ? "%4d" : " all", r->cpu);
	fmt_bytes(bytes, sizeof(bytes), per_s(r->bytes, dt));
	fmt_ns(p50, sizeof(p50), r->p50_ns);
	fmt_ns(p99, sizeof(p99), r->p99_ns);
	if (r->wakeups)
		snprintf(rpw, sizeof(rpw), "%.1f", rec_per_wakeup(r));
	line(w, "%s %9.0f %10s %9.1f %10s %6llu %5u %9s %9s", cpu, per_s(r->events, dt), bytes,
	     per_s(r->wakeups, dt), rpw, (unsigned long long)r->lost, r->fill_pct,
	     r->events ? p50 : "-", r->events ? p99 : "-");
}

static void pipe_row(struct watch *w, const struct watch_row *r, double t, double dt)
{
	char cpu[16];

	snprintf(cpu, sizeof(cpu), r->cpu >= 0 ? "%5d" : "  all", r->cpu);
	line(w, "%8.1f %s %11.0f %11.0f %10.1f %11.1f %9llu %6u %11llu %11llu", t, cpu,
	     per_s(r->events, dt), per_s(r->bytes, dt), per_s(r->wakeups, dt), rec_per_wakeup(r),
	     (unsigned long long)r->lost, r->fill_pct, (unsigned long long)r->p50_ns,
	     (unsigned long long)r->p99_ns);
}

static void tty_redraw(struct watch *w, const struct watch_row *rows,
		       const struct watch_row *total, double dt)
{
	char up[32];

	frame_size(w);
	w->frame.len = 0;
	if (w->drawn_lines) {
		snprintf(up, sizeof(up), "\033[%dA\r", w->drawn_lines);
		frame_put(&w->frame, up, strlen(up));
	}
	w->drawn_lines = 0;
	text_header(w, (double)(watch_now_ns() - w->t0_ns) / 1e9);
	line(w, COLS_TTY);
	for (size_t i = 0; rows && i < w->nrows; i++)
		tty_row(w, &rows[i], dt);
	if (rows)
		tty_row(w, total, dt);
	if (rows)
		watch_rb_tty(w, dt);
	if (rows)
		watch_byview_tty(w, dt);
	if (rows)
		watch_profile_tty(w, dt);
	frame_write(w);
}

/* Unicode blocks for the bars only where the terminal's locale is UTF-8. */
static bool utf8_locale(void)
{
	const char *cs;

	if (!setlocale(LC_CTYPE, ""))
		return false;
	cs = nl_langinfo(CODESET);
	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

void watch_view_start(struct watch *w)
{
	w->tty = isatty(STDOUT_FILENO) == 1 && !w->a.print && !w->quiet;
	if (w->tty)
		w->frame.utf8 = utf8_locale();
	if (w->a.print && !w->a.overwrite && w->a.order_window_ns)
		fprintf(stderr, "%s: --print on loop %s: lines time-ordered across CPUs with a "
			"%llu ms window (--order-window)\n", watch_prog_name(&w->a), w->loop_name,
			(unsigned long long)(w->a.order_window_ns / 1000000));
	else if (w->a.print && !w->a.overwrite)
		fprintf(stderr, "%s: --print on loop %s: --order-window 0: lines as each CPU's "
			"ring delivers them, not time-ordered across CPUs\n",
			watch_prog_name(&w->a), w->loop_name);
	if (w->quiet || w->a.print)
		return;
	if (w->a.json)
		json_start(w);
	else if (w->tty)
		tty_redraw(w, NULL, NULL, 0);
	else {
		text_header(w, 0);
		line(w, COLS_PIPE);
	}
	fflush(stdout);
}

void watch_view_interval(struct watch *w, const struct watch_row *rows,
			 const struct watch_row *total, double dt)
{
	double t = (double)(watch_now_ns() - w->t0_ns) / 1e9;

	if (w->a.print)
		watch_print_flush(w);
	if (w->quiet || w->a.print)
		return;
	if (w->a.json)
		json_interval(w, rows, total, dt);
	else if (w->tty)
		tty_redraw(w, rows, total, dt);
	for (size_t i = 0; !w->a.json && !w->tty && i < w->nrows; i++)
		pipe_row(w, &rows[i], t, dt);
	if (!w->a.json && !w->tty)
		pipe_row(w, total, t, dt);
	if (!w->a.json && !w->tty)
		watch_rb_pipe(w, t, dt);
	if (!w->a.json && !w->tty)
		watch_byview_pipe(w, t, dt);
	if (!w->a.json && !w->tty)
		watch_profile_pipe(w, t, dt);
	fflush(stdout);
}

static void text_count_row(const struct watch_row *r, double secs, const char *lead)
{
	char bytes[24], p50[24], p99[24];

	fmt_bytes(bytes, sizeof(bytes), (double)r->bytes);
	fmt_ns(p50, sizeof(p50), r->p50_ns);
	fmt_ns(p99, sizeof(p99), r->p99_ns);
	printf("%s%llu events (%.0f/s), %s, %llu wakeups (%.1f records/wakeup), %llu lost, "
	       "max fill %u%%, latency p50 %s p99 %s\n", lead, (unsigned long long)r->events,
	       per_s(r->events, secs), bytes, (unsigned long long)r->wakeups, rec_per_wakeup(r),
	       (unsigned long long)r->lost, r->fill_pct, r->events ? p50 : "-",
	       r->events ? p99 : "-");
}

static void text_summary(const struct watch *w, const struct watch_row *rows,
			 const struct watch_row *total, double secs)
{
	char lead[64];

	if (w->tty)
		fputs("\r\033[K", stdout);   /* over the terminal's echoed ^C */
	snprintf(lead, sizeof(lead), "summary: %.2f s on %s: ", secs, w->loop_name);
	text_count_row(total, secs, lead);
	for (size_t i = 0; i < w->nrows; i++) {
		snprintf(lead, sizeof(lead), "  cpu %d: ", rows[i].cpu);
		text_count_row(&rows[i], secs, lead);
	}
	watch_rb_summary(w);
	watch_byview_summary(w);
	watch_profile_summary(w);
	if (w->signo)
		printf("stopped by %s\n", strsignal(w->signo));
	if (w->child > 0 && WIFEXITED(w->child_status))
		printf("command exited with status %d\n", WEXITSTATUS(w->child_status));
	else if (w->child > 0 && WIFSIGNALED(w->child_status))
		printf("command killed by %s\n", strsignal(WTERMSIG(w->child_status)));
}

void watch_view_summary(struct watch *w, const struct watch_row *rows,
			const struct watch_row *total, double secs, int exit_code)
{
	if (w->a.print)
		watch_print_flush(w);
	if (w->a.print)
		fprintf(stderr, "%s: %llu samples, %llu lost\n", watch_prog_name(&w->a),
			(unsigned long long)total->events, (unsigned long long)total->lost);
	else if (w->a.json)
		json_summary(w, rows, total, secs, exit_code);
	else if (!w->quiet)
		text_summary(w, rows, total, secs);
	fflush(stdout);
	free(w->frame.buf);
	w->frame = (struct watch_frame){ 0 };
}
