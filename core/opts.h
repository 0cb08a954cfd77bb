/* SPDX-License-Identifier: MIT */
/* Validating perfring_opts and resolving the CPU set they name. */
#ifndef PR_OPTS_H
#define PR_OPTS_H

#include "base/err.h"

#include <perfring/perfring.h>

/* The longest order window (perfring_opts and perfring_loop_opts): the
 * timer of the oldest kept record is armed in ms (a uint32_t). */
#define PR_ORDER_WINDOW_MAX_NS (60ull * 1000000000ull)

/* Checks an order window of where ("opts", "perfring_loop_opts"): 0 or
 * -EINVAL with a sentence into e (NULL: this thread's). */
int pr_opts_window(struct pr_errbuf *e, const char *where, uint64_t ns);

/* Checks o (a copy) and fills its defaults; *data_size: the ring's bytes.
 * 0 or -errno with this thread's sentence. */
int pr_opts_check(struct perfring_opts *o, size_t page, uint64_t *data_size);

/* The sorted CPU set o names: its list, checked online, or every online
 * CPU. 0 or -errno with this thread's sentence. */
int pr_opts_cpus(const struct perfring_opts *o, int **cpus, size_t *n);

#endif
