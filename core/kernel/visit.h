/* SPDX-License-Identifier: MIT */
/* Visiting CPUs: waiting out the kernel's writers of rings whose output was
 * just paused by running on each of their CPUs. */
#ifndef PR_KERNEL_VISIT_H
#define PR_KERNEL_VISIT_H

#include <stddef.h>

/* Runs the calling thread on each of cpus in turn, then gives it back its
 * affinity. 0 once it has run on every one; -errno when one cannot be
 * reached (a cpuset without it, an offline CPU), and the caller must wait
 * some other way. */
int pr_visit_cpus(const int *cpus, size_t n);

#endif
