/* SPDX-License-Identifier: MIT */
/* A watch's session: options to perfring_opts, each event added with its
 * sample callback and field table, then started. Failures throw the
 * library's sentence. */
#include "pn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const software[] = {
	[PERFRING_SW_CPU_CLOCK] = "cpu-clock",
	[PERFRING_SW_TASK_CLOCK] = "task-clock",
	[PERFRING_SW_CONTEXT_SWITCHES] = "context-switches",
	[PERFRING_SW_PAGE_FAULTS] = "page-faults",
	[PERFRING_SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERFRING_SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERFRING_SW_CPU_MIGRATIONS] = "cpu-migrations",
};

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	struct pn_event *e = ctx;
	struct pn_watch *w = e->w;

	pn_buf_push(&w->buf, (uint32_t)(e - w->ev), s);
	pn_watch_pending(w);
	return 0;
}

static int fail(napi_env env, struct pn_watch *w, int err)
{
	pn_throw(env, err, perfring_session_last_error(w->s));
	return err;
}

static int add_software(napi_env env, struct pn_watch *w, struct pn_event *e)
{
	size_t k;
	int err;

	for (k = 0; k < sizeof(software) / sizeof(software[0]); k++)
		if (!strcmp(e->name, software[k]))
			break;
	if (k == sizeof(software) / sizeof(software[0]))
		return pn_einval(env, "perfring.watch: unknown event '%s': give system:name for a "
				 "tracepoint, or one of cpu-clock, task-clock, context-switches, "
				 "page-faults, minor-faults, major-faults, cpu-migrations", e->name);
	err = perfring_session_add_software(w->s, (enum perfring_software)k, 1, &e->ev);
	return err ? fail(env, w, err) : 0;
}

/* 'SYSTEM:NAME' split at its first ':'; an empty part is named here, before
 * the library, which would refuse it too. */
static int split_tracepoint(napi_env env, char *sys, char **name)
{
	const char *missing;

	*name = strchr(sys, ':');
	*(*name)++ = '\0';
	if (!*sys && !**name)
		missing = "its system and its name are";
	else if (!*sys)
		missing = "its system (before the ':') is";
	else if (!**name)
		missing = "its name (after the ':') is";
	else
		return 0;
	return pn_einval(env, "perfring.watch: event '%s:%s': %s empty; give 'system:name', "
			 "e.g. 'syscalls:sys_enter_getpid'", sys, *name, missing);
}

static int add_tracepoint(napi_env env, struct pn_watch *w, struct pn_event *e)
{
	char *sys = strdup(e->name), *name;
	int err;

	if (!sys)
		return pn_enomem(env);
	err = split_tracepoint(env, sys, &name);
	if (!err && (err = perfring_session_add_tracepoint(w->s, sys, name, &e->ev)))
		fail(env, w, err);
	else if (!err && (err = pn_event_fields(e, sys, name)))
		pn_throw(env, err, "perfring.watch: the tracepoint's format file could not be read");
	free(sys);
	return err;
}

static int add_events(napi_env env, struct pn_watch *w, const struct pn_opts *o)
{
	struct pn_event *e;
	size_t i;
	int err;

	if (!(w->ev = calloc(o->event_n, sizeof(*w->ev))))
		return pn_enomem(env);
	for (i = 0; i < o->event_n; i++, w->ev_n++) {
		e = &w->ev[i];
		e->w = w;
		if (!(e->name = strdup(o->events[i])))
			return pn_enomem(env);
		err = strchr(e->name, ':') ? add_tracepoint(env, w, e) : add_software(env, w, e);
		if (err)
			return err;
		if (e->field_n > w->max_fields)
			w->max_fields = e->field_n;
		perfring_event_set_callback(e->ev, on_sample, e);
	}
	return 0;
}

/* The default watermark: 4 KiB, or half the ring when that is smaller. */
static uint32_t watermark(const struct pn_opts *o)
{
	uint64_t ring = (uint64_t)(o->pages ? o->pages : 64) * (uint64_t)sysconf(_SC_PAGESIZE);

	if (o->watermark_set)
		return o->watermark;
	return ring > 4096 ? 4096 : (uint32_t)(ring / 2);
}

int pn_session_open(napi_env env, struct pn_watch *w, const struct pn_opts *o)
{
	struct perfring_opts so = {
		.sz = sizeof(so), .cpus = o->cpus, .cpu_cnt = o->cpu_n, .pid = o->pid,
		.ring_pages = o->pages, .wakeup_watermark = watermark(o), .flush_ms = o->flush_ms,
		/* Without a watermark the library polls: flushMs is its interval. */
		.poll_interval_ms = o->flush_ms,
		/* A long-lived program outlives CPUs: without a chosen list the
		 * watch keeps to the online ones as they come and go. */
		.follow_hotplug = !o->cpus,
		.order_window_ns = o->order_window_ns,
	};
	int err;

	/* A command is forked stopped: the session counts it from its exec. */
	if (o->command) {
		if ((err = pn_child_spawn(env, w, o->command)))
			return err;
		so.pid = w->command_pid = w->child->sp.pid;
		so.enable_on_exec = 1;
	}
	if ((err = perfring_session_new(&so, &w->s))) {
		pn_throw(env, err, perfring_session_last_error(NULL));
		return err;
	}
	if ((err = add_events(env, w, o)))
		return err;
	if (so.follow_hotplug && (err = pn_cpus_follow(w)))
		return fail(env, w, err);
	if ((err = perfring_session_start(w->s)))
		return fail(env, w, err);
	if (so.follow_hotplug)
		pn_cpus_started(w);
	return 0;
}
