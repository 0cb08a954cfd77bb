/* SPDX-License-Identifier: MIT */
/* The event registry: what each added event is, its callback, and the
 * session's record callback. Knows no session: it owns a pr_registry. */
#ifndef PR_EVENT_H
#define PR_EVENT_H

#include "base/err.h"
#include "decode/record.h"
#include "kernel/tracefs.h"

#include <perfring/perfring.h>
#include <stddef.h>

/* PR_EV_RINGBUF is no perf event: it has no attr and is kept apart from
 * the events the rings open (pr_registry.sources). */
enum pr_ev_kind { PR_EV_TRACEPOINT, PR_EV_SOFTWARE, PR_EV_ATTR, PR_EV_BPF, PR_EV_RINGBUF };

struct pr_rbuf;

/* A BPF output event's map (features/bpf_output.c): our own fd of it, and the
 * entries this session wrote (key = CPU, value = that CPU's event fd, which
 * the CPU's ring owns), to delete at free. */
struct pr_bpf_entry {
	int cpu, fd;
};
struct pr_bpf_map {
	int fd;
	uint32_t id, max_entries;
	struct pr_bpf_entry *set;
	size_t nset;
};


/* Where kernel records go: read by the slow path of every parse. */
struct pr_sink {
	perfring_record_fn fn;
	void *ctx;
	uint32_t mask;              /* PERFRING_REC_* asked for */
};

/* A CPU's drops grew by lost (perfring_session_set_lost_callback). */
typedef void (*pr_lost_fn)(int cpu, uint64_t lost, void *ctx);
struct pr_lost_cb {
	pr_lost_fn fn;              /* NULL: none */
	void *ctx;
};

struct pr_registry {
	struct perfring_event **events;   /* perf events: what the rings open */
	size_t nevents;
	struct perfring_event **sources;  /* events read from elsewhere (BPF ring
					     buffers): no attr, never opened */
	size_t nsources;
	struct pr_sink sink;
	struct pr_lost_cb lost;     /* told each growth of a CPU's stats.lost */
	bool frozen;                /* started: nothing is added or changed */
	struct pr_errbuf *err;      /* the owner's sentence buffer */
};

struct perfring_event {
	struct pr_registry *reg;
	enum pr_ev_kind kind;
	struct perf_event_attr attr;
	struct pr_layout layout;   /* of attr.sample_type, for the decoder */
	char name[160];
	perfring_sample_fn fn;
	void *ctx;
	char *filter;
	struct pr_tp_format fmt; /* tracepoints only */
	struct pr_bpf_map bpf;   /* PR_EV_BPF only */
	struct pr_rbuf *rbuf;    /* PR_EV_RINGBUF only: its reader, owned by
				    features/bpf_ringbuf.c */
	struct perfring_event *group; /* its group's leader (perfring_event_set_group) */
	char *uprobe_path;       /* uprobes: attr.config1 points at it */
	size_t members;          /* events whose group it leads */
};

/* The lost callback of the registry whose sink k is: every ring's sink is
 * its session's registry's (session.c, rings/open.c, hotplug). */
static inline const struct pr_lost_cb *pr_sink_lost(const struct pr_sink *k)
{
	return &((const struct pr_registry *)(const void *)((const char *)k -
				offsetof(struct pr_registry, sink)))->lost;
}

/* Whether the sink passes on a decoded record: all but a KSYMBOL that only
 * came to carry CGROUP or NAMESPACES records (rings/open.c). */
static inline bool pr_sink_wants(const struct pr_sink *k, uint32_t type)
{
	return type != PERF_RECORD_KSYMBOL || (k->mask & PERFRING_REC_KSYMBOL);
}

/* Hands smp to ev's callback, if it has one. true: the callback asked to
 * stop. fn is read at each call: a callback may replace its own. */
static inline bool pr_event_call(const struct perfring_event *ev,
				 const struct perfring_sample *smp)
{
	perfring_sample_fn fn = __atomic_load_n(&ev->fn, __ATOMIC_RELAXED);

	return fn && fn(smp, ev->ctx);
}

/* Forces what every event needs to share a ring and be timed (see add_attr). */
void pr_event_force_attr(struct perf_event_attr *a);

/* The read_format bits a PERF_SAMPLE_READ event may ask for. */
#define PR_READ_FORMATS                                                              \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
	 PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* A PERF_SAMPLE_READ event's read_format gets ID and LOST; other events
 * are opened with the library's own (rings/open.c). */
void pr_event_force_read(struct perf_event_attr *a);

/* The public add calls, on a registry (the session's wrappers check s). */
int pr_add_tracepoint(struct pr_registry *r, const char *system, const char *name,
		      struct perfring_event **out);
int pr_add_software(struct pr_registry *r, enum perfring_software kind,
		    const struct perfring_software_opts *opts, struct perfring_event **out);
int pr_add_attr(struct pr_registry *r, const struct perf_event_attr *attr,
		struct perfring_event **out);
/* Registers an event of kind with attr (forced as every event's) and name;
 * the kind's own parts are the caller's to fill in *out. */
int pr_add_event(struct pr_registry *r, enum pr_ev_kind kind, const struct perf_event_attr *attr,
		 const char *name, struct perfring_event **out);
/* Registers a source of kind (PR_EV_RINGBUF) named name in r->sources:
 * an event with no attr, whose parts are the caller's to fill in *out. */
int pr_add_source(struct pr_registry *r, enum pr_ev_kind kind, const char *name,
		  struct perfring_event **out);
int pr_add_uprobe(struct pr_registry *r, const char *path, uint64_t offset, bool retprobe,
		  struct perfring_event **out);
int pr_set_record_callback(struct pr_registry *r, uint32_t mask, perfring_record_fn fn,
			   void *ctx);
int pr_set_lost_callback(struct pr_registry *r, pr_lost_fn fn, void *ctx);

void pr_registry_free(struct pr_registry *r);

/* Every callback from now on asks to stop, delivering nothing, and no lost
 * callback is called (a session freed inside a callback, R7). */
void pr_registry_silence(struct pr_registry *r);

#endif
