/* SPDX-License-Identifier: MIT */
/* The profiler's sample parts: leaves the sample walker (record.c) calls at
 * their places in perf_output_sample() order, each given a cursor (by value:
 * it stays in registers) over what is left of the record. */
#ifndef PR_PROFILE_H
#define PR_PROFILE_H

#include "decode/layout.h"

/* The profiler's parts of an event's attr into l, after pr_layout_init. */
void pr_layout_profile(struct pr_layout *l, const struct perf_event_attr *attr);

/* PERF_SAMPLE_READ laid out by read_format: read, read_nr, read_format and
 * the times. The position after it, NULL if it overruns the record. */
const uint8_t *pr_profile_read(struct pr_cur c, uint64_t read_format, struct perfring_sample *out);

/* What follows RAW: BRANCH_STACK, REGS_USER, STACK_USER, WEIGHT, DATA_SRC,
 * TRANSACTION, REGS_INTR, PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE
 * (those sample_type has), then regs_user_nr and regs_intr_nr. 0, or
 * -EBADMSG if a part overruns the record. */
int pr_profile_after_raw(struct pr_cur c, const struct pr_layout *l, struct perfring_sample *out);

#endif
