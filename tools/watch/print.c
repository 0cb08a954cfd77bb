/* SPDX-License-Identifier: MIT */
/* perfring-watch --print: one line per sample as perf script prints it by
 * default (comm pid/tid [cpu] secs.usecs: event: field=value ...), written
 * as the sample is delivered. The order is the library's: with
 * --order-window the session and the loop's reactor deliver in time order
 * across CPUs (perfring_opts and perfring_loop_opts.order_window_ns, set in
 * session.c and run.c), so nothing is sorted here. Comms come from COMM and
 * FORK records, else from /proc. */
#include "config.h"
#include "watch.h"
#include "textesc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FIELDS 64
#define COMM_SLOTS 4096
#define LINE_MAX_BYTES 4096

struct watch_fmt {
	size_t n;
	struct perfring_field f[MAX_FIELDS];
};

struct comm_slot {
	uint32_t tid;
	char comm[16];
};

struct watch_print {
	struct watch_fmt fmt[2 * WATCH_MAX_EVENTS + 2];
	struct comm_slot comm[COMM_SLOTS];
	uint64_t flush_ns, flushed_ns;      /* stdout flushed this often; last time */
};

/* ------------------------------------------------------------ comms */

static struct comm_slot *comm_slot(struct watch_print *p, uint32_t tid)
{
	return &p->comm[tid % COMM_SLOTS];
}

static void comm_set(struct watch_print *p, uint32_t tid, const char *comm)
{
	struct comm_slot *c = comm_slot(p, tid);
	char tmp[sizeof(c->comm)] = { 0 };     /* comm may be another slot's */

	memcpy(tmp, comm, strnlen(comm, sizeof(tmp) - 1));
	c->tid = tid;
	memcpy(c->comm, tmp, sizeof(tmp));
}

static const char *comm_of(struct watch_print *p, uint32_t pid, uint32_t tid)
{
	struct comm_slot *c = comm_slot(p, tid);
	char path[64], buf[32];
	ssize_t r;
	int fd;

	if (c->tid == tid && c->comm[0])
		return c->comm;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r <= 0)
		snprintf(buf, sizeof(buf), ":%u", tid);
	else
		buf[r - (buf[r - 1] == '\n')] = '\0';
	comm_set(p, tid, buf);
	return c->comm;
}

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct watch_print *p = ((struct watch *)ctx)->print;
	struct comm_slot *parent;

	if (r->type == PERF_RECORD_COMM) {
		comm_set(p, r->u.comm.tid, r->u.comm.comm);
	} else if (r->type == PERF_RECORD_FORK) {
		parent = comm_slot(p, r->u.task.ptid);
		if (parent->tid == r->u.task.ptid && parent->comm[0])
			comm_set(p, r->u.task.tid, parent->comm);
	}
	return 0;
}

/* ------------------------------------------------------------ fields */

static const char *tracefs_root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *env = getenv("PERFRING_TRACEFS");

	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (access(roots[i], X_OK) == 0)
			return roots[i];
	return roots[0];
}

static bool is_ident(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* The name in "\tfield:TYPE NAME[N];\t...": the identifier before ';',
 * past an array suffix of the name ("comm[16]"), not one of the type
 * ("__data_loc char[] filename"). */
static bool field_name(const char *line, char *name, size_t len)
{
	const char *p = strstr(line, "field:"), *semi, *end, *start;

	if (!p || !(semi = strchr(p, ';')))
		return false;
	end = semi;
	while (end > p && end[-1] == ' ')
		end--;
	if (end > p && end[-1] == ']')
		while (end > p && *--end != '[')
			;
	start = end;
	while (start > p && is_ident(start[-1]))
		start--;
	if (start == end || (size_t)(end - start) >= len)
		return false;
	memcpy(name, start, (size_t)(end - start));
	name[end - start] = '\0';
	return strncmp(name, "common_", 7) != 0;
}

/* Every field of the format, in its order, but the common_ ones (as perf). */
static int load_fields(const struct perfring_event *ev, struct watch_fmt *fmt)
{
	const char *spec = perfring_event_name(ev);
	char path[512], line[512], name[128];
	int sys_len = (int)strcspn(spec, ":");
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%.*s/%s/format", tracefs_root(), sys_len, spec,
		 spec[sys_len] ? spec + sys_len + 1 : "");
	if (!(f = fopen(path, "re")))
		return -errno;
	fmt->n = 0;
	while (fgets(line, sizeof(line), f) && fmt->n < MAX_FIELDS)
		if (field_name(line, name, sizeof(name)) &&
		    !perfring_event_field(ev, name, &fmt->f[fmt->n]))
			fmt->n++;
	fclose(f);
	return 0;
}

/* Said once a field: a pointer's value is an address, not what it points to. */
static void warn_pointers(const struct watch *w, const struct watch_ev *e)
{
	for (size_t i = 0; i < e->fmt->n; i++)
		if (fc_is_pointer(&e->fmt->f[i]))
			fprintf(stderr, "%s: %s %s:%s: the field is a pointer (%s); its values "
				"are addresses in the traced process, not the string\n",
				watch_prog_name(&w->a), w->a.overwrite ? "--overwrite" : "--print",
				perfring_event_name(e->ev),
				e->fmt->f[i].name, e->fmt->f[i].type);
}

int watch_print_bind(struct watch *w, struct watch_ev *e)
{
	int err;

	e->fmt = &w->print->fmt[e->idx];
	if ((err = load_fields(e->ev, e->fmt)))
		return err;
	warn_pointers(w, e);
	return 0;
}

/* ------------------------------------------------------------ lines */

static uint32_t effective_flush_ms(const struct watch_args *a)
{
	if (a->flush_ms)
		return a->flush_ms;
	return a->watermark || a->wakeup_events ? 100 : 15;
}

int watch_print_open(struct watch *w)
{
	uint32_t ms = effective_flush_ms(&w->a);

	if (!w->print && !(w->print = calloc(1, sizeof(*w->print))))
		return -ENOMEM;
	w->print->flush_ns = ms == PERFRING_FLUSH_NEVER ? UINT64_MAX : (uint64_t)ms * 1000000ull;
	return perfring_session_set_record_callback(w->s, PERFRING_REC_COMM | PERFRING_REC_TASK,
						    on_record, w);
}

void watch_print_close(struct watch *w)
{
	if (!w->print)
		return;
	free(w->print);
	w->print = NULL;
}

static size_t put_value(char *buf, size_t cap, const struct perfring_field *f,
			const struct perfring_sample *smp)
{
	char num[FC_NUM_MAX];
	const char *v;
	size_t len, o = 0;

	if (fc_value(f, smp, num, &v, &len))
		return (size_t)snprintf(buf, cap, " %s=?", f->name);
	o = (size_t)snprintf(buf, cap, " %s=", f->name);
	if (o >= cap)
		return cap - 1;
	if (!(f->flags & PERFRING_FIELD_STRING) || !esc_needs_quotes(v, len))
		return o + esc_text(buf + o, cap - o, v, len, 0);
	o += (size_t)snprintf(buf + o, cap - o, "\"");
	o += esc_text(buf + o, cap - o, v, len, ESC_QUOTE);
	return o + (size_t)snprintf(buf + o, cap - o, o + 1 < cap ? "\"" : "");
}

static size_t format_line(struct watch_print *p, const struct watch_ev *e,
			  const struct perfring_sample *smp, char *buf, size_t cap)
{
	char comm[16 * 4 + 1];
	const char *c = comm_of(p, smp->pid, smp->tid);
	size_t o;

	esc_text(comm, sizeof(comm), c, strlen(c), 0);
	o = (size_t)snprintf(buf, cap, "%16s %6u/%-6u [%03d] %llu.%06llu: %s:", comm, smp->pid,
			     smp->tid, smp->cpu, (unsigned long long)(smp->time / WATCH_NS),
			     (unsigned long long)(smp->time % WATCH_NS / 1000),
			     perfring_event_name(e->ev));
	for (size_t i = 0; e->fmt && i < e->fmt->n && o + 1 < cap; i++)
		o += put_value(buf + o, cap - o, &e->fmt->f[i], smp);
	if (o + 1 >= cap)
		o = cap - 2;
	buf[o++] = '\n';
	return o;
}

/* A JSON string of s[0..len), escaped: hostile bytes never go out raw. */
static void json_bytes(FILE *out, const char *s, size_t len)
{
	char buf[LINE_MAX_BYTES];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	watch_json_fstr(out, buf);
}

/* --overwrite --json: one object per sample, its fields by name. */
static void json_line(FILE *out, struct watch_print *p, const struct watch_ev *e,
		      const struct perfring_sample *smp)
{
	const char *c = comm_of(p, smp->pid, smp->tid), *v;
	char num[FC_NUM_MAX];
	size_t len;

	fputs("{\"event\":", out);
	watch_json_fstr(out, perfring_event_name(e->ev));
	fprintf(out, ",\"cpu\":%d,\"pid\":%u,\"tid\":%u,\"time\":%llu,\"comm\":", smp->cpu,
		smp->pid, smp->tid, (unsigned long long)smp->time);
	json_bytes(out, c, strlen(c));
	fputs(",\"fields\":{", out);
	for (size_t i = 0; e->fmt && i < e->fmt->n; i++) {
		const struct perfring_field *f = &e->fmt->f[i];
		bool ok = fc_value(f, smp, num, &v, &len) == 0;

		fputs(i ? "," : "", out);
		watch_json_fstr(out, f->name);
		putc(':', out);
		if (ok && ((f->flags & (PERFRING_FIELD_STRING | PERFRING_FIELD_ARRAY)) ||
			   fc_is_pointer(f)))
			json_bytes(out, v, len);
		else if (ok)
			fwrite(v, 1, len, out);
		else
			fputs("null", out);
	}
	fputs("}}\n", out);
}

void watch_print_sample(struct watch *w, const struct watch_ev *e,
			const struct perfring_sample *smp)
{
	struct watch_print *p = w->print;
	char buf[LINE_MAX_BYTES];
	size_t len;

	/* A snapshot is time-ordered already: each line goes out as it comes. */
	if (w->a.overwrite && w->a.json) {
		json_line(w->out, p, e, smp);
		return;
	}
	len = format_line(p, e, smp, buf, sizeof(buf));
	if (w->a.overwrite) {
		fwrite(buf, 1, len, w->out);
		return;
	}

	fwrite(buf, 1, len, stdout);
	/* A pipe's buffer goes out at each tick and at least every flush
	 * period while lines come, so the window bounds what a reader waits. */
	if (p->flush_ns != UINT64_MAX) {
		uint64_t now = watch_now_ns();

		if (now - p->flushed_ns >= p->flush_ns) {
			fflush(stdout);
			p->flushed_ns = now;
		}
	}
}

/* Each tick and at the end: what stdout's buffer holds. */
void watch_print_flush(struct watch *w)
{
	if (w->print)
		fflush(stdout);
}
