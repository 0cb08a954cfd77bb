/* SPDX-License-Identifier: MIT */
/* The session: options, CPUs, rings, and the state every other unit shares. */
#ifndef PR_SESSION_H
#define PR_SESSION_H

#include "error.h"
#include "merge.h"
#include "ring.h"

#include <perfring/perfring.h>
#include <sys/types.h>

struct pr_idmap { uint64_t id; struct perfring_event *ev; };

/* One watched CPU: its ring, and the fds redirected into it. Written only by
 * the thread parsing this CPU, so it is padded to its own cache lines. */
struct pr_cpu {
	int cpu;
	int leader_fd;              /* mmapped; the fd callers watch */
	void *map;
	size_t map_len;
	struct pr_ring ring;
	uint8_t *scratch;
	struct pr_idmap *ids;       /* sorted by id; NULL ev = the dummy leader */
	size_t nids;
	struct pr_idmap last;       /* last lookup hit */
	int *fds;                   /* every other fd on this CPU */
	size_t nfds;
	struct perfring_cpu_stats st;
	uint64_t last_time;         /* of the last record delivered */
	bool pulling;               /* pull form holds an uncommitted batch */
	char pad[64];               /* keeps CPUs parsed by different threads apart */
};

enum pr_state { PR_NEW, PR_STARTED, PR_STOPPED };

struct perfring_session {
	struct perfring_opts o;     /* validated copy; o.cpus is NULL */
	int *cpus;                  /* sorted */
	size_t ncpu;
	size_t page_size;
	uint64_t data_size;         /* ring_pages * page_size */
	enum pr_state state;
	struct perfring_event **events;
	size_t nevents;
	uint32_t rec_mask;
	perfring_record_fn rec_fn;
	void *rec_ctx;
	pid_t *tids;                /* pid mode: the threads at start */
	size_t ntids;
	struct pr_cpu *cpu;         /* ncpu, set at start */
	struct perfring_cpu_fd *fds;
	int epfd;                   /* wakeup mode: every leader fd, and tfd */
	int tfd;                    /* wakeup mode: the flush timer (timerfd) */
	struct pr_tree tree;         /* the merge over every CPU */
	struct pr_cursor *cur;      /* the merge's reading state, a line per CPU */
	struct pr_batch *batch;     /* the merge's batches; NULL: one ring */
	uint64_t last_merged_time;
	uint64_t merged_records;    /* records read by merged parses, ever */
	char err[PR_ERR_LEN];
};

/* epfd's data for tfd; a ring's is its index in s->cpu. */
#define PR_FLUSH_TOKEN UINT64_MAX

static inline bool pr_wakeup_mode(const struct perfring_session *s)
{
	return s->o.wakeup_watermark || s->o.wakeup_events;
}

/* Index of cpu in s->cpu, or -1. */
int pr_cpu_index(const struct perfring_session *s, int cpu);

/* The attr ev (NULL = the CPU's dummy leader) is opened with: the event's own
 * plus what the session decides (inherit, wakeups, tracking records). */
void pr_open_attr(const struct perfring_session *s, const struct perfring_event *ev,
		  struct perf_event_attr *a);

/* open.c: open/mmap/redirect/enable everything, or roll back. */
int pr_session_open(struct perfring_session *s);
void pr_session_close(struct perfring_session *s);
int pr_session_enable(struct perfring_session *s, bool on);

#endif
