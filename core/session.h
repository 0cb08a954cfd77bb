/* SPDX-License-Identifier: MIT */
/* The session: its options, its CPU set, its events, its rings, and the
 * services its features and parses use (session.c); its public lifecycle is
 * lifecycle.c. Each part's rules live with that part; this only holds them. */
#ifndef PR_SESSION_H
#define PR_SESSION_H

#include "base/err.h"
#include "event.h"
#include "kernel/cpulist.h"
#include "rings/open.h"
#include "read/cpu.h"

#include <perfring/perfring.h>

struct pr_merge;
struct pr_snap;
struct pr_hotplug;
struct pr_feature;
struct pr_ringbufs;

enum pr_state { PR_NEW, PR_STARTED, PR_STOPPED };

/* Something attached to a session from a layer above it (a reactor, the
 * built-in wait): told when the session goes away, so it can let go of
 * everything it holds of the session's. */
struct pr_attachment {
	void (*release)(struct pr_attachment *a);
	struct pr_attachment *next;
	/* CPU hotplug (may be NULL): s->cpu[idx] went offline (drain it and
	 * stop watching it, before its fds close) or came online (watch its
	 * new fd and drain it). gen: the change it was last told of. */
	void (*cpu_change)(struct pr_attachment *a, size_t idx, bool on);
	unsigned gen;
};

struct perfring_session {
	struct perfring_opts o;     /* validated copy; o.cpus is NULL */
	int *cpus;                  /* sorted */
	size_t ncpu;
	size_t page_size;
	uint64_t data_size;         /* ring_pages * page_size */
	enum pr_state state;
	struct pr_registry reg;
	struct pr_cpu *cpu;         /* ncpu, set at start */
	struct perfring_cpu_fd *fds; /* the CPUs on, in order */
	size_t nfds;
	struct pr_merge *merge;     /* time order over every CPU */
	const struct pr_feature *const *features; /* feature.c's rows */
	struct pr_attachment *attached;
	int pidfd;                  /* pid mode: readable once the process exited; -1 */
	int cgroup_fd;              /* opts.cgroup's directory (features/cgroup.c); -1 */
	int depth;                  /* R7: parses in progress, from any thread */
	bool closing;               /* R7: freed inside one of them: free at the last */
	struct pr_errbuf err;
	struct pr_snap *snap;       /* opts.overwrite: the snapshots' copies (snapshot.c) */
	struct pr_hotplug *hp;      /* opts.follow_hotplug: the CPUs' states; else NULL */
	struct pr_ringbufs *rbs;    /* BPF ring buffers (features/bpf_ringbuf.c); NULL: none */
};

static inline struct pr_errbuf *pr_serr(struct perfring_session *s)
{
	return s ? &s->err : NULL;
}

static inline bool pr_wakeup_mode(const struct perfring_session *s)
{
	return s->o.wakeup_watermark || s->o.wakeup_events;
}

/* R2: in pid mode, whether the watched process has exited (every thread):
 * a ring whose fd reported HUP is only done then. Else true. Once it has,
 * the events' drop totals are due (R4), as after stop. */
bool pr_session_process_gone(struct perfring_session *s);

/* -EBUSY, with the sentence for a merged parse that found a ring held (R1). */
int pr_session_busy(struct perfring_session *s);

/* Index of cpu in s->cpu, or -1. */
static inline int pr_cpu_index(const struct perfring_session *s, int cpu)
{
	return s->cpu ? pr_cpulist_find(s->cpus, s->ncpu, cpu) : -1;
}

/* The session's opening plan (for pr_open_attr in tests). */
void pr_session_plan(const struct perfring_session *s, struct pr_plan *p);

/* Whether s->cpu[idx] is on (read/cpu.h's pr_cpu_on). */
static inline bool pr_session_cpu_on(const struct perfring_session *s, size_t idx)
{
	return pr_cpu_on(&s->cpu[idx]);
}

/* s->fds from the CPUs on now (after start and each change). */
void pr_session_fds_update(struct perfring_session *s);

/* A following session's CPU c opened again (before it is enabled): every
 * feature's cpu_up; on a failure those done are undone. / c is about to
 * close: every feature's cpu_down. */
int pr_session_cpu_up(struct perfring_session *s, struct pr_cpu *c);
void pr_session_cpu_down(struct perfring_session *s, struct pr_cpu *c);

/* Every feature's tick (parse_all, the sleep-polling wait): as its hooks. */
int pr_session_tick(struct perfring_session *s);

/* The slots, their fd list and the merge over cpu (s takes it); at start
 * and for adopted rings. 0 or -ENOMEM with the sentence. */
int pr_session_rings(struct perfring_session *s, struct pr_cpu *cpu);

/* Lets go of the rings: merge, fds, mappings. */
void pr_session_close_rings(struct perfring_session *s);

/* Starts s on rings someone else built (a test's synthetic ones): takes
 * cpu[0..n), which must be sorted by CPU and calloc'ed, instead of opening
 * the kernel's. 0 or -ENOMEM. */
int pr_session_adopt(struct perfring_session *s, struct pr_cpu *cpu, size_t n);

static inline bool pr_session_closing(const struct perfring_session *s)
{
	return __atomic_load_n(&s->closing, __ATOMIC_ACQUIRE);
}

/* R7 (docs/RULES.md): a parse (from parse.c, a reactor or the wait) holds
 * the session while it runs; perfring_session_free() inside one is carried
 * out by the last pr_session_leave (pr_session_free_deferred), which then
 * returns true: s is gone. Inline, because cpu_next pays both for every
 * record. */
static inline void pr_session_enter(struct perfring_session *s)
{
	__atomic_fetch_add(&s->depth, 1, __ATOMIC_ACQ_REL);
}

void pr_session_free_deferred(struct perfring_session *s);

static inline bool pr_session_leave(struct perfring_session *s)
{
	if (__atomic_sub_fetch(&s->depth, 1, __ATOMIC_ACQ_REL) || !pr_session_closing(s))
		return false;
	pr_session_free_deferred(s);
	return true;
}

void pr_attach(struct perfring_session *s, struct pr_attachment *a);
void pr_detach(struct perfring_session *s, struct pr_attachment *a);

#endif
