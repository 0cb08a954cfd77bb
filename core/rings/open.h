/* SPDX-License-Identifier: MIT */
/* Opening the rings from a plan: what to open, for whom, on which CPUs.
 * Fills pr_cpu[] and never sees the session. */
#ifndef PR_RINGS_OPEN_H
#define PR_RINGS_OPEN_H

#include "base/err.h"
#include "read/cpu.h"

struct pr_plan {
	struct perfring_event *const *events;
	size_t nevents;
	const struct pr_sink *sink; /* the record callback; its mask asks for records */
	int pid;                    /* >0: that process's threads; else every task */
	uint32_t ring_pages;        /* data pages per ring, a power of two */
	size_t page_size;
	uint32_t wakeup_watermark, wakeup_events;
	bool enable_on_exec;        /* the kernel enables every event at the next execve */
	int cgroup_fd;              /* >= 0: a cgroup directory (PERF_FLAG_PID_CGROUP) */
	bool overwrite;             /* rings written backward, mapped read-only */
};

/* The attr ev (NULL = a CPU's dummy leader) is opened with: the event's own
 * plus what the plan decides (inherit, wakeups, tracking records). */
void pr_open_attr(const struct pr_plan *p, const struct perfring_event *ev,
		  struct perf_event_attr *a);

/* Opens, mmaps and redirects every event of the plan on cpu[0..n) (each
 * with .cpu set, the rest zeroed), or rolls all of it back. Does not enable. */
int pr_open_cpus(const struct pr_plan *p, struct pr_cpu *cpu, size_t n, struct pr_errbuf *e);

/* Opens ev for every task on c's CPU (pid -1, whatever the plan's scope),
 * redirected into c's ring, its id and fd in c's tables; *fd: that fd,
 * which c owns. pr_open_cpus skips events of kind PR_EV_BPF: this opens
 * them. On failure, what it made is in c for pr_close_cpus. */
int pr_open_cpuwide(const struct pr_plan *p, struct pr_cpu *c, struct perfring_event *ev,
		    struct pr_errbuf *e, int *fd);

/* Disables, unmaps and closes everything pr_open_cpus made (safe on a
 * partly opened or zeroed cpu[]). */
void pr_close_cpus(struct pr_cpu *cpu, size_t n);

/* PERF_EVENT_IOC_ENABLE (on) or _DISABLE every fd of cpu[0..n). */
int pr_enable_cpus(struct pr_cpu *cpu, size_t n, bool on, struct pr_errbuf *e);

#endif
