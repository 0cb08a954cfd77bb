/* SPDX-License-Identifier: MIT */
/* Waiting out the writers of paused rings by running on their CPUs.
 *
 * Every record written into a CPU's ring is written on that CPU (a ring's
 * events are bound to it; a BPF program's output too), from
 * perf_output_begin to perf_output_end with preemption off
 * (perf_output_get_handle). So once this thread has been scheduled on a
 * CPU after PERF_EVENT_IOC_PAUSE_OUTPUT, every write that began there
 * before the pause has published its record: a few migrations instead of
 * an RCU grace period (membarrier, some 10 ms). */
#include "kernel/visit.h"
#include "base/sys.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Bits for any kernel's nr_cpu_ids (CONFIG_NR_CPUS is at most 8192):
 * sched_getaffinity fails with EINVAL on a mask smaller than that. */
#define SETTLE_CPUS 8192

static int run_on(int cpu, cpu_set_t *one, size_t sz)
{
	if (cpu < 0 || cpu >= SETTLE_CPUS)
		return -EINVAL;
	CPU_ZERO_S(sz, one);
	CPU_SET_S((size_t)cpu, sz, one);
	if (pr_set_affinity(sz, one))
		return -errno;
	/* The kernel moves a running caller before the call returns; only a
	 * concurrent change of its cpuset could have moved it on since. */
	if (sched_getcpu() != cpu && (sched_yield(), sched_getcpu() != cpu))
		return -EAGAIN;
	return 0;
}

/* The old mask back; failing that (its CPUs left the cpuset meanwhile),
 * every CPU, which the kernel cuts to the cpuset: never left on one CPU. */
static void restore(cpu_set_t *old, size_t sz)
{
	if (pr_set_affinity(sz, old) == 0)
		return;
	memset(old, 0xff, sz);
	(void)pr_set_affinity(sz, old);
}

int pr_visit_cpus(const int *cpus, size_t n)
{
	size_t sz = CPU_ALLOC_SIZE(SETTLE_CPUS), i;
	cpu_set_t *old = pr_calloc(1, sz), *one = pr_calloc(1, sz);
	int err = 0;

	if (!old || !one)
		err = -ENOMEM;
	else if (pr_get_affinity(sz, old))
		err = -errno;
	else {
		for (i = 0; i < n && !err; i++)
			err = run_on(cpus[i], one, sz);
		restore(old, sz);
	}
	free(old);
	free(one);
	return err;
}
