/* SPDX-License-Identifier: MIT */
/* Validating perfring_opts and resolving the CPU set they name. */
#ifndef PR_OPTS_H
#define PR_OPTS_H

#include <perfring/perfring.h>

/* Checks o (a copy) and fills its defaults; *data_size: the ring's bytes.
 * 0 or -errno with this thread's sentence. */
int pr_opts_check(struct perfring_opts *o, size_t page, uint64_t *data_size);

/* The sorted CPU set o names: its list, checked online, or every online
 * CPU. 0 or -errno with this thread's sentence. */
int pr_opts_cpus(const struct perfring_opts *o, int **cpus, size_t *n);

#endif
