/* SPDX-License-Identifier: MIT */
/* perfring-watch: the session. The session validates the options and events
 * itself, so a refusal there is a usage error (exit 2) printed with the
 * session's own sentence; a refusal by the kernel at start is a failure
 * (exit 1) with the cause and fix, except that with -- COMMAND or -p an
 * unprivileged user falls back to user-only software events. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void session_opts(const struct watch *w, struct perfring_opts *o)
{
	const struct watch_args *a = &w->a;

	*o = (struct perfring_opts){
		.sz = sizeof(*o),
		.cpus = a->cpus,
		.cpu_cnt = a->cpu_cnt,
		.pid = w->child ? (int)w->child : a->pid,
		.ring_pages = a->pages,
		.wakeup_watermark = a->watermark,
		.wakeup_events = a->wakeup_events,
		.enable_on_exec = w->child != 0,    /* count COMMAND from its exec, as perf stat */
		.overwrite = a->overwrite,
		.cgroup = a->cgroup,
		/* every CPU, as they come and go; a flight recorder follows none */
		.follow_hotplug = !a->cpus && !a->overwrite,
		.order_window_ns = a->order_window_ns,   /* --print's lines in time order */
	};
	if (a->overwrite)
		return;
	if (a->watermark || a->wakeup_events)
		o->flush_ms = a->flush_ms;
	else
		o->poll_interval_ms = a->flush_ms;
}

/* The session's sentences name struct fields; the user typed options. */
static void print_sentence(const char *s)
{
	static const char *const map[][2] = {
		{ "opts.wakeup_watermark", "--watermark" }, { "opts.wakeup_events", "--wakeup-events" },
		{ "opts.ring_pages", "--pages" }, { "opts.cpus", "-c" }, { "opts.pid", "-p" },
		{ "opts.flush_ms", "--flush-ms" }, { "opts.poll_interval_ms", "--flush-ms" },
		{ "opts.cgroup", "--cgroup" }, { "opts.order_window_ns", "--order-window" },
	};
	size_t n = sizeof(map) / sizeof(map[0]);

	while (*s) {
		size_t i = 0;

		while (i < n && strncmp(s, map[i][0], strlen(map[i][0])))
			i++;
		if (i < n) {
			fputs(map[i][1], stderr);
			s += strlen(map[i][0]);
		} else {
			fputc(*s++, stderr);
		}
	}
}

/* perfring-watch or perfring-exporter, for the messages. */
static const char *me = "perfring-watch";

static int fail(int code, const char *what, const char *sentence, int err)
{
	fprintf(stderr, "%s: %s", me, what);
	print_sentence(sentence && *sentence ? sentence : perfring_strerror(err));
	fprintf(stderr, "%s\n", code == WATCH_EXIT_USAGE ? " (see --help)" : "");
	return code;
}

/* Each event's callback gets its own watch_ev, so a sample finds its
 * --by counters and --print fields without a search. */
static int add_named(struct watch *w, struct perfring_event *ev, struct watch_ev **out)
{
	struct watch_ev *e;
	int err;

	if (w->nnames == sizeof(w->names) / sizeof(w->names[0]))
		return -E2BIG;
	e = &w->evs[w->nnames];
	*e = (struct watch_ev){ .w = w, .ev = ev, .idx = w->nnames };
	if ((err = perfring_event_set_callback(ev, watch_on_sample, e)))
		return err;
	w->names[w->nnames++] = perfring_event_name(ev);
	if (out)
		*out = e;
	return 0;
}

/* What the tracepoint's samples are read for: --filter, --by, --print. */
static int add_content(struct watch *w, size_t i, struct watch_ev *e)
{
	const char *filter = w->a.filter[i];
	int err;

	if (filter && (err = perfring_event_set_filter(e->ev, filter)))
		return fail(WATCH_EXIT_FAIL, "--filter: ", NULL, err);
	if ((err = watch_by_bind(w, w->a.tp[i], e)))
		return err;
	if (w->a.print && (err = watch_print_bind(w, e)))
		return fail(WATCH_EXIT_FAIL, "--print: ", NULL, err);
	return 0;
}

/* Internal: perf or tracefs refused for lack of privilege (not an exit code). */
#define DENIED (-1)
#define TRACEFS_EVENTS "/sys/kernel/tracing/events"

static char denied_why[640];

static bool lacks_privilege(int err)
{
	/* tracefs is root-only (0700); unprivileged, the core finds no tracefs
	 * at all and says -ENODEV rather than -EACCES. */
	return err == -EACCES || err == -EPERM || (err == -ENODEV && geteuid() != 0);
}

static int denied(struct watch *w, const char *spec)
{
	if (spec && access(TRACEFS_EVENTS, R_OK | X_OK) < 0 && errno == EACCES)
		snprintf(denied_why, sizeof(denied_why), "tracepoint %s: %s: Permission denied; "
			 "tracefs is readable by root only, run as root", spec, TRACEFS_EVENTS);
	else
		snprintf(denied_why, sizeof(denied_why), "%s", perfring_session_last_error(w->s));
	return DENIED;
}

static int add_tracepoint(struct watch *w, size_t i)
{
	char sys[256];
	const char *spec = w->a.tp[i], *colon = strchr(spec, ':');
	size_t len = (size_t)(colon - spec);
	struct perfring_event *ev;
	struct watch_ev *e = NULL;
	int err;

	if (len >= sizeof(sys))
		return fail(WATCH_EXIT_USAGE, "", "-e: system name too long", -EINVAL);
	memcpy(sys, spec, len);
	sys[len] = '\0';
	err = perfring_session_add_tracepoint(w->s, sys, colon + 1, &ev);
	if (lacks_privilege(err))
		return denied(w, spec);
	if (!err)
		err = add_named(w, ev, &e);
	if (err)
		return fail(err == -ENOENT || err == -EINVAL ? WATCH_EXIT_USAGE : WATCH_EXIT_FAIL,
			    "", perfring_session_last_error(w->s), err);
	return add_content(w, i, e);
}

static int add_software(struct watch *w, const struct watch_sw *sw, bool user_only)
{
	struct perfring_software_opts so = {
		.sz = sizeof(so), .period = sw->period, .exclude_kernel = user_only,
	};
	struct perfring_event *ev;
	int err = perfring_session_add_software_opts(w->s, sw->kind, &so, &ev);

	if (!err)
		err = add_named(w, ev, NULL);
	if (err)
		return fail(WATCH_EXIT_FAIL, "", perfring_session_last_error(w->s), err);
	return 0;
}

/* A ring buffer's samples count in its own row, not in a CPU's. */
static int add_ringbuf(struct watch *w, int fd, const char *path, struct perfring_event **ev)
{
	int err = perfring_session_add_bpf_ringbuf(w->s, fd, NULL, ev);

	if (!err) {
		w->rbs[w->nrb] = (struct watch_rb){ .path = path };
		w->nrb++;
	}
	return err;
}

/* A map another tool's program writes to, by its bpffs pin: its type says
 * which call reads it (anything else gets the session's sentence). */
static int add_bpf_map(struct watch *w, const char *path)
{
	struct perfring_event *ev;
	struct watch_ev *e = NULL;
	char why[320];
	int fd = watch_bpf_get(path, why, sizeof(why)), err;
	bool rb;

	if (fd < 0)
		return fail(WATCH_EXIT_FAIL, "--bpf-map ", why, -errno);
	rb = watch_bpf_map_type(fd) == BPF_MAP_TYPE_RINGBUF;
	err = rb ? add_ringbuf(w, fd, path, &ev) : perfring_session_add_bpf_output(w->s, fd, &ev);
	close(fd); /* the session keeps its own */
	if (!err)
		err = add_named(w, ev, &e);
	if (err)
		return fail(err == -EBADF || err == -EINVAL ? WATCH_EXIT_USAGE : WATCH_EXIT_FAIL,
			    "--bpf-map: ", perfring_session_last_error(w->s), err);
	e->dump = w->a.dump;
	if (rb) {
		e->rb = &w->rbs[w->nrb - 1];
		e->rb->e = e;
	}
	return 0;
}

/* -u PATH:SYMBOL[%return]: the symbol's offset from the file's own tables. */
static int add_uprobe(struct watch *w, const char *spec)
{
	const char *colon = strrchr(spec, ':'), *sym = colon + 1;
	char path[4096], name[512];
	size_t plen = (size_t)(colon - spec), slen = strlen(sym);
	bool ret = slen > 7 && !strcmp(sym + slen - 7, "%return");
	struct perfring_event *ev;
	uint64_t off;
	int err;

	if (ret)
		slen -= 7;
	if (plen >= sizeof(path) || slen >= sizeof(name))
		return fail(WATCH_EXIT_USAGE, "", "-u: path or symbol too long", -EINVAL);
	memcpy(path, spec, plen);
	path[plen] = '\0';
	memcpy(name, sym, slen);
	name[slen] = '\0';
	if ((err = perfring_uprobe_offset(path, name, &off)))
		return fail(WATCH_EXIT_USAGE, "-u: ", perfring_session_last_error(NULL), err);
	err = perfring_session_add_uprobe(w->s, path, off, ret, &ev);
	if (lacks_privilege(err))
		return denied(w, NULL);
	if (!err)
		err = add_named(w, ev, NULL);
	if (err)
		return fail(WATCH_EXIT_FAIL, "-u: ", perfring_session_last_error(w->s), err);
	return 0;
}

/* --profile HZ: cpu-clock at HZ with callchains, and the MMAP2 records
 * that turn its user IPs into PATH+0xOFFSET. */
static int add_profile(struct watch *w, bool user_only)
{
	struct perfring_software_opts so = {
		.sz = sizeof(so), .freq = w->a.profile_hz, .callchain = 1,
		.exclude_kernel = user_only,
	};
	struct perfring_event *ev;
	struct watch_ev *e = NULL;
	int err = perfring_session_add_software_opts(w->s, PERFRING_SW_CPU_CLOCK, &so, &ev);

	if (!err)
		err = add_named(w, ev, &e);
	if (!err && (err = watch_profile_open(w)) == 0)
		e->profile = true;
	if (err)
		return fail(WATCH_EXIT_FAIL, "--profile: ", perfring_session_last_error(w->s), err);
	return 0;
}

/* Tracepoints cannot be user-only; the fallback watches the command's user
 * time and page faults instead. */
static const struct watch_sw fallback_sw[] = {
	{ PERFRING_SW_TASK_CLOCK, 1000000 },
	{ PERFRING_SW_PAGE_FAULTS, 1 },
};

static int add_events(struct watch *w, bool user_only)
{
	const struct watch_args *a = &w->a;
	int code;

	w->nnames = 0;
	w->nrb = 0;
	for (size_t i = 0; i < a->tp_cnt && !user_only; i++)
		if ((code = add_tracepoint(w, i)))
			return code;
	for (size_t i = 0; user_only && a->tp_cnt && i < 2; i++)
		if ((code = add_software(w, &fallback_sw[i], true)))
			return code;
	for (size_t i = 0; i < a->sw_cnt; i++)
		if ((code = add_software(w, &a->sw[i], user_only)))
			return code;
	for (size_t i = 0; i < a->bpf_cnt; i++)
		if ((code = add_bpf_map(w, a->bpf_map[i])))
			return code;
	for (size_t i = 0; i < a->uprobe_cnt; i++)
		if ((code = add_uprobe(w, a->uprobe[i])))
			return code;
	if (a->profile_hz && (code = add_profile(w, user_only)))
		return code;
	return 0;
}

static int create(struct watch *w, bool user_only)
{
	struct perfring_opts o;
	int err;

	session_opts(w, &o);
	err = perfring_session_new(&o, &w->s);
	if (err)
		return fail(err == -ENOMEM ? WATCH_EXIT_FAIL : WATCH_EXIT_USAGE, "",
			    perfring_session_last_error(NULL), err);
	w->user_only = user_only;
	if (o.follow_hotplug && (err = perfring_session_set_cpu_callback(w->s, watch_on_cpu, w)))
		return fail(WATCH_EXIT_FAIL, "", perfring_session_last_error(w->s), err);
	watch_by_free(w);
	if (w->a.print && (err = watch_print_open(w)))
		return fail(WATCH_EXIT_FAIL, "--print: ", perfring_session_last_error(w->s), err);
	return add_events(w, user_only);
}

static bool has_filter(const struct watch_args *a)
{
	for (size_t i = 0; i < a->tp_cnt; i++)
		if (a->filter[i])
			return true;
	return false;
}

static int start(struct watch *w)
{
	int err = perfring_session_start(w->s);

	if (lacks_privilege(err))
		return denied(w, NULL);
	if (err)
		return fail(err == -EINVAL && has_filter(&w->a) ? WATCH_EXIT_USAGE : WATCH_EXIT_FAIL,
			    "", perfring_session_last_error(w->s), err);
	return 0;
}

static int create_and_start(struct watch *w, bool user_only)
{
	int code;

	perfring_session_free(w->s);
	w->s = NULL;
	code = create(w, user_only);
	return code ? code : start(w);
}

/* With COMMAND or -p, an unprivileged user can still watch their own process. */
static int fall_back(struct watch *w)
{
	fprintf(stderr, "%s: ", me);
	print_sentence(denied_why);
	fprintf(stderr, "\n%s: not privileged: watching the %s with user-only "
		"(exclude_kernel) software events instead\n", me, w->child ? "command" : "process");
	return create_and_start(w, true);
}

static int explain_denied(void)
{
	fprintf(stderr, "%s: ", me);
	print_sentence(denied_why);
	fputc('\n', stderr);
	if (geteuid() != 0)
		fprintf(stderr, "%s: without privileges, watch a command of your own "
			"instead: %s -s task-clock -- COMMAND\n", me, me);
	return WATCH_EXIT_FAIL;
}

int watch_session_open(struct watch *w)
{
	int err, code;

	me = watch_prog_name(&w->a);
	if (w->a.command && (err = watch_child_spawn(w)))
		return fail(WATCH_EXIT_FAIL, "fork: ", NULL, err);
	code = create_and_start(w, false);
	if (code == DENIED && (w->child || w->a.pid))
		code = fall_back(w);
	if (code == DENIED)
		code = explain_denied();
	if (!code && watch_cpus_init(w))
		code = fail(WATCH_EXIT_FAIL, "", NULL, -ENOMEM);
	if (!code && w->nby < w->a.by_cnt)
		fprintf(stderr, "%s: --by: %zu of %zu not watched (tracepoints need root)\n",
			watch_prog_name(&w->a), w->a.by_cnt - w->nby, w->a.by_cnt);
	if (code) {
		perfring_session_free(w->s);
		w->s = NULL;
		watch_child_abort(w);
		watch_by_free(w);
		watch_print_close(w);
		watch_profile_close(w);
	}
	return code;
}
