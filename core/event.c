/* SPDX-License-Identifier: MIT */
/* The event registry: building each kind of event, and the per-event calls. */
#include "event.h"
#include "base/sys.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void pr_event_force_attr(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->sample_type |= PR_SAMPLE_FORCED;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	/* The session owns wakeups: the leader's ring decides them. */
	a->watermark = 0;
	a->wakeup_events = 0;
}

static void event_free(struct perfring_event *ev)
{
	if (!ev)
		return;
	free(ev->filter);
	free(ev->uprobe_path);
	pr_format_free(&ev->fmt);
	if (ev->kind == PR_EV_BPF) {
		close(ev->bpf.fd);
		free(ev->bpf.set);
	}
	free(ev);
}

void pr_registry_free(struct pr_registry *r)
{
	size_t i;

	for (i = 0; i < r->nevents; i++)
		event_free(r->events[i]);
	for (i = 0; i < r->nsources; i++)
		event_free(r->sources[i]);
	free(r->events);
	free(r->sources);
	r->events = r->sources = NULL;
	r->nevents = r->nsources = 0;
}

static int silent_sample(const struct perfring_sample *smp, void *ctx)
{
	return 1;
}

static int silent_record(const struct perfring_record *rec, void *ctx)
{
	return 1;
}

void pr_registry_silence(struct pr_registry *r)
{
	size_t i;

	for (i = 0; i < r->nevents; i++)
		__atomic_store_n(&r->events[i]->fn, silent_sample, __ATOMIC_RELAXED);
	for (i = 0; i < r->nsources; i++)
		__atomic_store_n(&r->sources[i]->fn, silent_sample, __ATOMIC_RELAXED);
	__atomic_store_n(&r->sink.fn, silent_record, __ATOMIC_RELAXED);
	__atomic_store_n(&r->lost.fn, NULL, __ATOMIC_RELAXED);
}

static int check_addable(struct pr_registry *r)
{
	if (r->frozen)
		return pr_err(r->err, -EBUSY, "events can only be added before perfring_session_start");
	return 0;
}

/* Takes ownership of ev: registers it in r's list of its kind (perf
 * events, or sources), or frees it on failure. */
static int register_event(struct pr_registry *r, struct perfring_event *ev,
			  struct perfring_event **out)
{
	bool src = ev->kind == PR_EV_RINGBUF;
	struct perfring_event ***list = src ? &r->sources : &r->events;
	size_t *n = src ? &r->nsources : &r->nevents;
	struct perfring_event **arr;

	arr = pr_realloc(*list, (*n + 1) * sizeof(*arr));
	if (!arr) {
		pr_err(r->err, -ENOMEM, "out of memory adding event %s", ev->name);
		event_free(ev);
		return -ENOMEM;
	}
	*list = arr;
	arr[(*n)++] = ev;
	ev->reg = r;
	if (out)
		*out = ev;
	return 0;
}

/* A PERF_SAMPLE_READ block always names its counters and their drops, and
 * every fd's read gives its drops (rings/lost.c, R4): ID and LOST. */
void pr_event_force_read(struct perf_event_attr *a)
{
	if (a->sample_type & PERF_SAMPLE_READ)
		a->read_format |= PERF_FORMAT_ID | PERF_FORMAT_LOST;
}

static struct perfring_event *event_alloc(struct pr_registry *r, enum pr_ev_kind kind,
					  const struct perf_event_attr *attr)
{
	struct perfring_event *ev = pr_calloc(1, sizeof(*ev));

	if (!ev) {
		pr_err(r->err, -ENOMEM, "out of memory adding an event");
		return NULL;
	}
	ev->kind = kind;
	ev->attr = *attr;
	pr_event_force_attr(&ev->attr);
	pr_event_force_read(&ev->attr);
	pr_layout_init(&ev->layout, ev->attr.sample_type);
	pr_layout_profile(&ev->layout, &ev->attr);
	return ev;
}

static int tracefs_root(struct pr_errbuf *e, char *root, size_t len)
{
	int err = pr_tracefs_root(root, len);

	if (err == -EACCES || err == -EPERM)
		return pr_err(e, err, "tracefs (/sys/kernel/tracing) is not readable: %s; "
			      "tracepoints need root, or tracefs mounted with a group you are in "
			      "(mount -o remount,gid=GROUP,mode=0750)", perfring_strerror(err));
	if (err)
		return pr_err(e, err,
			      "tracefs not found (PERFRING_TRACEFS, /sys/kernel/tracing, "
			      "/sys/kernel/debug/tracing, /proc/mounts): %s; mount it with "
			      "`mount -t tracefs nodev /sys/kernel/tracing`",
			      perfring_strerror(err));
	return 0;
}

static int load_format(struct pr_errbuf *e, const char *root, const char *sys,
		       const char *name, struct pr_tp_format *fmt)
{
	char why[160] = "";
	int err = pr_tracefs_load(root, sys, name, fmt, why, sizeof(why));

	if (err == -ENOENT)
		return pr_err(e, err,
			      "no tracepoint %s:%s in %s/events; list the available ones with "
			      "`ls %s/events/%s` or `perf list tracepoint`",
			      sys, name, root, root, sys);
	if (err)
		return pr_err(e, err, "tracepoint %s:%s: reading %s/events/%s/%s/format: %s%s%s",
			      sys, name, root, sys, name, perfring_strerror(err),
			      why[0] ? ": " : "", why);
	return 0;
}

/* Each part names one tracefs directory: an empty one, a '/' or a leading
 * '.' would name another path (events///format, events/../..). */
static int check_tp_part(struct pr_errbuf *e, const char *what, const char *part)
{
	if (!*part)
		return pr_err(e, -EINVAL, "tracepoint %s is empty: give SYSTEM:NAME "
			      "(e.g. syscalls:sys_enter_getpid)", what);
	if (strchr(part, '/'))
		return pr_err(e, -EINVAL, "tracepoint %s \"%s\" holds a '/': a %s is one "
			      "directory of tracefs's events/", what, part, what);
	if (part[0] == '.')
		return pr_err(e, -EINVAL, "tracepoint %s \"%s\" starts with '.': no tracepoint "
			      "%s does", what, part, what);
	return 0;
}

int pr_add_tracepoint(struct pr_registry *r, const char *system, const char *name,
		      struct perfring_event **out)
{
	struct perf_event_attr a = { 0 };
	struct perfring_event *ev;
	char root[PATH_MAX];
	int err = check_addable(r);

	if (err)
		return err;
	if (!system || !name)
		return pr_null(r->err, "perfring_session_add_tracepoint", system ? "name" : "system");
	if ((err = check_tp_part(r->err, "system", system)) ||
	    (err = check_tp_part(r->err, "name", name)))
		return err;
	if ((err = tracefs_root(r->err, root, sizeof(root))))
		return err;
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	if (!(ev = event_alloc(r, PR_EV_TRACEPOINT, &a)))
		return -ENOMEM;
	if ((err = load_format(r->err, root, system, name, &ev->fmt))) {
		event_free(ev);
		return err;
	}
	ev->attr.config = ev->fmt.id;
	snprintf(ev->name, sizeof(ev->name), "%s:%s", system, name);
	return register_event(r, ev, out);
}

/* R12 (docs/RULES.md): Linux fills a software overflow's sample ID and
 * TIME once and reuses them for every event of that kind on the CPU, so a
 * second one would get the first one's samples, or have them decoded with
 * its layout. */
static int check_kind_free(struct pr_registry *r, const struct perf_event_attr *a,
			   const char *call)
{
	const struct perfring_event *ev;
	size_t i;

	/* A BPF output is written to its event alone, never shared. */
	if (a->type != PERF_TYPE_SOFTWARE || a->config == PERF_COUNT_SW_BPF_OUTPUT)
		return 0;
	for (i = 0; i < r->nevents; i++) {
		ev = r->events[i];
		if (ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == a->config)
			return pr_err(r->err, -EEXIST,
				      "%s: the session already has %s, a software event of the "
				      "same kind (type %u, config %llu); Linux gives every event "
				      "of one software kind on a CPU the same sample ID and time, "
				      "so the second one's samples would reach the wrong event or "
				      "be decoded with the wrong layout: add the kind once and "
				      "share its callback", call, ev->name, a->type,
				      (unsigned long long)a->config);
	}
	return 0;
}

static const uint64_t sw_config[] = {
	[PERFRING_SW_CPU_CLOCK] = PERF_COUNT_SW_CPU_CLOCK,
	[PERFRING_SW_TASK_CLOCK] = PERF_COUNT_SW_TASK_CLOCK,
	[PERFRING_SW_CONTEXT_SWITCHES] = PERF_COUNT_SW_CONTEXT_SWITCHES,
	[PERFRING_SW_PAGE_FAULTS] = PERF_COUNT_SW_PAGE_FAULTS,
	[PERFRING_SW_PAGE_FAULTS_MIN] = PERF_COUNT_SW_PAGE_FAULTS_MIN,
	[PERFRING_SW_PAGE_FAULTS_MAJ] = PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	[PERFRING_SW_CPU_MIGRATIONS] = PERF_COUNT_SW_CPU_MIGRATIONS,
};
static const char *const sw_name[] = {
	"cpu-clock", "task-clock", "context-switches", "page-faults",
	"minor-faults", "major-faults", "cpu-migrations",
};

/* What a DWARF unwinder needs: user registers and the stack above SP. */
static int software_unwind(struct pr_registry *r, const struct perfring_software_opts *o,
			   struct perf_event_attr *a)
{
	if (o->stack_user % 8 || o->stack_user > PERFRING_STACK_USER_MAX)
		return pr_err(r->err, -EINVAL, "perfring_software_opts.stack_user is %u; it must be "
			      "a multiple of 8 and at most %u", o->stack_user, PERFRING_STACK_USER_MAX);
	a->sample_regs_user = o->regs_user;
	if (o->stack_user && !a->sample_regs_user)
		a->sample_regs_user = PERFRING_REGS_USER_DEFAULT;
	if (o->stack_user && !a->sample_regs_user)
		return pr_err(r->err, -EINVAL, "perfring_software_opts.stack_user needs regs_user: "
			      "there is no default register mask for this architecture");
	if (a->sample_regs_user)
		a->sample_type |= PERF_SAMPLE_REGS_USER;
	if (o->stack_user) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = o->stack_user;
	}
	return 0;
}

int pr_add_software(struct pr_registry *r, enum perfring_software kind,
		    const struct perfring_software_opts *opts, struct perfring_event **out)
{
	struct perfring_software_opts o;
	struct perf_event_attr a = { 0 };
	struct perfring_event *ev;
	int err = check_addable(r);

	if (err)
		return err;
	if ((unsigned)kind >= sizeof(sw_config) / sizeof(sw_config[0]))
		return pr_err(r->err, -EINVAL, "add_software: unknown kind %d", (int)kind);
	if ((err = pr_opts_copy(r->err, "perfring_software_opts", &o, sizeof(o),
				offsetof(struct perfring_software_opts, regs_user), opts)))
		return err;
	if (o.period && o.freq)
		return pr_err(r->err, -EINVAL, "perfring_software_opts: period and freq exclude each other");
	a.type = PERF_TYPE_SOFTWARE;
	a.config = sw_config[kind];
	if ((err = check_kind_free(r, &a, "add_software")))
		return err;
	a.freq = o.freq != 0;
	a.sample_freq = o.freq ? o.freq : (o.period ? o.period : 1);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
			(o.callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	a.exclude_kernel = o.exclude_kernel != 0;
	a.exclude_hv = 1;
	if ((err = software_unwind(r, &o, &a)))
		return err;
	if (!(ev = event_alloc(r, PR_EV_SOFTWARE, &a)))
		return -ENOMEM;
	snprintf(ev->name, sizeof(ev->name), "software:%s", sw_name[kind]);
	return register_event(r, ev, out);
}

int pr_add_attr(struct pr_registry *r, const struct perf_event_attr *attr,
		struct perfring_event **out)
{
	struct perfring_event *ev;
	const char *bad;
	int err = check_addable(r);

	if (err)
		return err;
	if (!attr)
		return pr_null(r->err, "perfring_session_add_attr", "attr");
	bad = pr_sample_unsupported(attr->sample_type);
	if (bad)
		return pr_err(r->err, -EOPNOTSUPP,
			      "add_attr: sample_type bit %s is not supported by the decoder", bad);
	if ((attr->sample_type & PERF_SAMPLE_READ) && (attr->read_format & ~PR_READ_FORMATS))
		return pr_err(r->err, -EINVAL, "add_attr: read_format bits %#llx are unknown "
			      "(known: TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING, ID, GROUP, LOST)",
			      (unsigned long long)(attr->read_format & ~PR_READ_FORMATS));
	if ((err = check_kind_free(r, attr, "add_attr")))
		return err;
	if (!(ev = event_alloc(r, PR_EV_ATTR, attr)))
		return -ENOMEM;
	snprintf(ev->name, sizeof(ev->name), "attr:type=%u,config=%llu", attr->type,
		 (unsigned long long)attr->config);
	return register_event(r, ev, out);
}

int pr_add_event(struct pr_registry *r, enum pr_ev_kind kind, const struct perf_event_attr *attr,
		 const char *name, struct perfring_event **out)
{
	struct perfring_event *ev;
	int err = check_addable(r);

	if (err)
		return err;
	if (!(ev = event_alloc(r, kind, attr)))
		return -ENOMEM;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->bpf.fd = -1;
	return register_event(r, ev, out);
}

int pr_add_source(struct pr_registry *r, enum pr_ev_kind kind, const char *name,
		  struct perfring_event **out)
{
	struct perfring_event *ev;
	int err = check_addable(r);

	if (err)
		return err;
	if (!(ev = pr_calloc(1, sizeof(*ev))))
		return pr_err(r->err, -ENOMEM, "out of memory adding an event");
	ev->kind = kind;
	ev->bpf.fd = -1;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	return register_event(r, ev, out);
}

#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe"

/* A number from a sysfs file of the uprobe PMU: its type, or the first bit
 * of a format field ("config:0"). */
static int uprobe_pmu_value(struct pr_errbuf *e, const char *file, const char *skip,
			    unsigned long *v)
{
	char path[128], *text, *end;
	size_t len;
	int err;

	snprintf(path, sizeof(path), UPROBE_PMU "/%s", file);
	if ((err = pr_read_file(path, 256, &text, &len)))
		return pr_err(e, err == -ENOENT ? -ENODEV : err, "add_uprobe: reading %s: %s%s",
			      path, perfring_strerror(err),
			      err == -ENOENT ? "; this kernel has no uprobe PMU "
			      "(CONFIG_UPROBE_EVENTS, Linux 4.17+)" : "");
	errno = 0;
	*v = strncmp(text, skip, strlen(skip)) ? ULONG_MAX :
	     strtoul(text + strlen(skip), &end, 10);
	err = *v == ULONG_MAX || errno || end == text + strlen(skip);
	free(text);
	return err ? pr_err(e, -EINVAL, "add_uprobe: %s does not hold what the uprobe PMU "
			    "should", path) : 0;
}

int pr_add_uprobe(struct pr_registry *r, const char *path, uint64_t offset, bool retprobe,
		  struct perfring_event **out)
{
	struct perf_event_attr a = { 0 };
	struct perfring_event *ev;
	unsigned long type, bit = 0;
	int err = check_addable(r);

	if (err)
		return err;
	if (!path || !path[0])
		return pr_err(r->err, -EINVAL, "add_uprobe: give the path of an ELF file");
	if (access(path, R_OK) < 0)
		return pr_err(r->err, -errno, "add_uprobe: %s: %s", path, perfring_strerror(-errno));
	if ((err = uprobe_pmu_value(r->err, "type", "", &type)) ||
	    (retprobe && (err = uprobe_pmu_value(r->err, "format/retprobe", "config:", &bit))))
		return err;
	if (bit > 63)
		return pr_err(r->err, -EINVAL, "add_uprobe: retprobe bit %lu", bit);
	a.type = (uint32_t)type;
	a.config = retprobe ? 1ull << bit : 0;
	a.config2 = offset;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP;
	if (!(ev = event_alloc(r, PR_EV_ATTR, &a)))
		return -ENOMEM;
	if (!(ev->uprobe_path = pr_strdup(path))) {
		event_free(ev);
		return pr_err(r->err, -ENOMEM, "out of memory adding a uprobe");
	}
	/* The kernel reads the path at perf_event_open: the event owns it. */
	ev->attr.config1 = (uint64_t)(uintptr_t)ev->uprobe_path;
	snprintf(ev->name, sizeof(ev->name), "uprobe:%.120s+%#llx%s", path,
		 (unsigned long long)offset, retprobe ? "%return" : "");
	return register_event(r, ev, out);
}

PERFRING_API int perfring_event_set_group(struct perfring_event *member,
					  struct perfring_event *leader)
{
	if (!member || !leader)
		return pr_null(member ? member->reg->err : NULL, __func__,
			       member ? "leader" : "member");
	if (member->reg->frozen)
		return pr_err(member->reg->err, -EBUSY, "set_group: only before start");
	if (member->kind == PR_EV_RINGBUF || leader->kind == PR_EV_RINGBUF)
		return pr_err(member->reg->err, -EOPNOTSUPP, "set_group: %s is a BPF ring buffer, "
			      "not a perf event: it has no counter to group",
			      member->kind == PR_EV_RINGBUF ? member->name : leader->name);
	if (member->reg != leader->reg || member == leader || leader->group ||
	    member->members || member->group)
		return pr_err(member->reg->err, -EINVAL, "set_group: %s cannot join %s's group: %s",
			      member->name, leader->name,
			      member->reg != leader->reg ? "they belong to different sessions" :
			      member == leader ? "an event cannot lead itself" :
			      leader->group ? "the leader is a member of another group" :
			      member->members ? "the member leads a group" :
			      "the member is in a group already");
	member->group = leader;
	leader->members++;
	return 0;
}

PERFRING_API int perfring_event_set_callback(struct perfring_event *ev, perfring_sample_fn fn,
					     void *ctx)
{
	if (!ev)
		return pr_null(NULL, __func__, "ev");
	ev->ctx = ctx;
	__atomic_store_n(&ev->fn, fn, __ATOMIC_RELAXED);
	return 0;
}

PERFRING_API int perfring_event_set_filter(struct perfring_event *ev, const char *filter)
{
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	char *copy;

	if (!ev)
		return pr_null(NULL, __func__, "ev");
	if (ev->kind == PR_EV_RINGBUF)
		return pr_err(ev->reg->err, -EOPNOTSUPP, "set_filter: %s is a BPF ring buffer, not a "
			      "perf event: the kernel filters no ring buffer; filter in its BPF "
			      "program or in the callback", ev->name);
	if (ev->kind != PR_EV_TRACEPOINT)
		return pr_err(ev->reg->err, -EINVAL, "set_filter: %s is not a tracepoint", ev->name);
	if (ev->reg->frozen)
		return pr_err(ev->reg->err, -EBUSY, "set_filter: %s: set filters before start",
			      ev->name);
	/* PERF_EVENT_IOC_SET_FILTER copies at most a page, NUL included (R10). */
	if (filter && (len = strlen(filter)) >= page)
		return pr_err(ev->reg->err, -E2BIG, "set_filter: %s: the filter is %zu bytes; "
			      "the kernel takes at most %zu (a page minus one byte)", ev->name, len,
			      page - 1);
	copy = filter ? pr_strdup(filter) : NULL;
	if (filter && !copy)
		return pr_err(ev->reg->err, -ENOMEM, "out of memory setting a filter");
	free(ev->filter);
	ev->filter = copy;
	return 0;
}

PERFRING_API int perfring_event_field(const struct perfring_event *ev, const char *name,
				      struct perfring_field *out)
{
	const struct perfring_field *f;

	if (!ev || !name || !out)
		return pr_null(ev ? ev->reg->err : NULL, __func__,
			       !ev ? "ev" : !name ? "name" : "out");
	if (ev->kind == PR_EV_RINGBUF)
		return pr_err(ev->reg->err, -EOPNOTSUPP, "event_field: %s is a BPF ring buffer: its "
			      "records are the program's own bytes (sample.raw), with no tracefs "
			      "format to name fields", ev->name);
	if (ev->kind != PR_EV_TRACEPOINT)
		return pr_err(ev->reg->err, -EINVAL, "event_field: %s is not a tracepoint", ev->name);
	f = pr_format_field(&ev->fmt, name);
	if (!f)
		return pr_err(ev->reg->err, -ENOENT, "event_field: %s has no field %s", ev->name, name);
	*out = *f;
	return 0;
}

PERFRING_API const char *perfring_event_name(const struct perfring_event *ev)
{
	return ev ? ev->name : "";
}

PERFRING_API const struct perf_event_attr *perfring_event_attr(const struct perfring_event *ev)
{
	return ev && ev->kind != PR_EV_RINGBUF ? &ev->attr : NULL;
}

int pr_set_record_callback(struct pr_registry *r, uint32_t mask, perfring_record_fn fn,
			   void *ctx)
{
	if (mask & ~(uint32_t)PERFRING_REC_ALL)
		return pr_err(r->err, -EINVAL, "set_record_callback: unknown bits 0x%x in mask",
			      mask & ~(uint32_t)PERFRING_REC_ALL);
	if (r->frozen)
		return pr_err(r->err, -EBUSY, "set_record_callback: only before start");
	r->sink = (struct pr_sink){ fn, ctx, mask };
	return 0;
}

int pr_set_lost_callback(struct pr_registry *r, pr_lost_fn fn, void *ctx)
{
	if (r->frozen)
		return pr_err(r->err, -EBUSY, "set_lost_callback: only before start");
	r->lost = (struct pr_lost_cb){ fn, ctx };
	return 0;
}
