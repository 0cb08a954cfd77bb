/* SPDX-License-Identifier: MIT */
/* sysfs's CPU lists (online, possible) under its root: /sys, or for tests
 * only the directory PERFRING_TEST_SYSFS names. */
#ifndef PR_KERNEL_SYSFS_H
#define PR_KERNEL_SYSFS_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>

/* Test-only (never for users): a directory standing in for /sys, whose
 * devices/system/cpu/online and possible files the test writes. */
#define PR_ENV_TEST_SYSFS "PERFRING_TEST_SYSFS"

/* Whether a test's root stands in for /sys. */
bool pr_sysfs_test_root(void);

/* The CPUs listed in devices/system/cpu/<which> ("online", "possible"),
 * sorted, at least one. 0, or -errno with a sentence naming the file in e
 * (NULL: this thread's buffer): -EINVAL for garbage, -ENODEV for an empty
 * or blank list, which Linux never writes (a following session makes no
 * change on either). */
int pr_sysfs_cpus(struct pr_errbuf *e, const char *which, int **cpus, size_t *n);

#endif
