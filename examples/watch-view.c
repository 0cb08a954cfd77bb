/* SPDX-License-Identifier: MIT */
/* perfring-watch: output. Three forms of the same rows: a table redrawn in
 * place on a TTY (ANSI cursor-up and erase-line, no curses), plain lines
 * when piped, and one JSON object per line with --json. */
#include "config.h"
#include "watch.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define COLS_TTY " CPU    events/s      bytes/s  wakeups/s  rec/wakeup      lost  fill%%       p50       p99"
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

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
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
		json_str(w->names[i]);
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
	for (size_t i = 0; i < w->ncpu; i++) {
		printf(i ? "," : "");
		json_rate_row(&rows[i], dt);
	}
	printf("],\"total\":");
	json_rate_row(total, dt);
	printf("}\n");
}

static void json_summary(const struct watch *w, const struct watch_row *rows,
			 const struct watch_row *total, double secs, int code)
{
	printf("{\"type\":\"summary\",\"loop\":\"%s\",\"duration_s\":%.3f,", w->loop_name, secs);
	json_count_fields(total);
	printf(",\"cpus\":[");
	for (size_t i = 0; i < w->ncpu; i++) {
		printf("%s{\"cpu\":%d,", i ? "," : "", rows[i].cpu);
		json_count_fields(&rows[i]);
		printf("}");
	}
	printf("],\"exit_code\":%d", code);
	if (w->child > 0 && WIFEXITED(w->child_status))
		printf(",\"command_status\":%d", WEXITSTATUS(w->child_status));
	else if (w->child > 0 && WIFSIGNALED(w->child_status))
		printf(",\"command_signal\":%d", WTERMSIG(w->child_status));
	printf(",\"signal\":%d}\n", w->signo);
}

/* ------------------------------------------------------------ text */

__attribute__((format(printf, 2, 3)))
static void line(struct watch *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputs(w->tty ? "\033[K\n" : "\n", stdout);
	w->drawn_lines++;
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
	line(w, "%s %11.0f %12s %10.1f %11s %9llu %6u %9s %9s", cpu, per_s(r->events, dt), bytes,
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
	if (w->drawn_lines)
		printf("\033[%dA\r", w->drawn_lines);
	w->drawn_lines = 0;
	text_header(w, (double)(watch_now_ns() - w->t0_ns) / 1e9);
	line(w, COLS_TTY);
	for (size_t i = 0; rows && i < w->ncpu; i++)
		tty_row(w, &rows[i], dt);
	if (rows)
		tty_row(w, total, dt);
}

void watch_view_start(struct watch *w)
{
	w->tty = isatty(STDOUT_FILENO) == 1;
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

	if (w->a.json)
		json_interval(w, rows, total, dt);
	else if (w->tty)
		tty_redraw(w, rows, total, dt);
	for (size_t i = 0; !w->a.json && !w->tty && i < w->ncpu; i++)
		pipe_row(w, &rows[i], t, dt);
	if (!w->a.json && !w->tty)
		pipe_row(w, total, t, dt);
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
	for (size_t i = 0; i < w->ncpu; i++) {
		snprintf(lead, sizeof(lead), "  cpu %d: ", rows[i].cpu);
		text_count_row(&rows[i], secs, lead);
	}
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
	if (w->a.json)
		json_summary(w, rows, total, secs, exit_code);
	else
		text_summary(w, rows, total, secs);
	fflush(stdout);
}
