/* SPDX-License-Identifier: MIT */
/* The profiler's sample parts (READ, branches, registers, user stack, memory
 * and page fields), each bounds-checked, in the kernel's perf_output_sample
 * order: leaves that record.c's sample walker calls. */
#include "decode/profile.h"

#include <errno.h>
#include <string.h>

/* n u64s at c: their address, or NULL when the record is shorter. */
static const uint64_t *take_words(struct pr_cur *c, uint64_t n)
{
	const uint64_t *w = (const uint64_t *)c->p;

	if (n > pr_cur_words(c))
		return NULL;
	c->p += n * sizeof(uint64_t);
	return w;
}

void pr_layout_profile(struct pr_layout *l, const struct perf_event_attr *a)
{
	if (a->sample_type & PR_SAMPLE_PROFILE)
		l->sb_shape = PR_SB_PROFILE;
	l->read_format = a->sample_type & PERF_SAMPLE_READ ? a->read_format : 0;
	l->regs_user_nr = (uint8_t)__builtin_popcountll(a->sample_regs_user);
	l->regs_intr_nr = (uint8_t)__builtin_popcountll(a->sample_regs_intr);
	l->branch_hw_index = (a->sample_type & PERF_SAMPLE_BRANCH_STACK) &&
			     (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX);
}

/* struct read_format: { value, [enabled], [running], [id], [lost] }, or with
 * GROUP { nr, [enabled], [running], { value, [id], [lost] }[nr] }. Either way
 * the times are the 2nd and 3rd u64. */
const uint8_t *pr_profile_read(struct pr_cur c, uint64_t f, struct perfring_sample *out)
{
	uint64_t nr = 1;
	unsigned times = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
	unsigned per = 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);
	const uint64_t *v = (const uint64_t *)c.p;

	if (pr_cur_words(&c) < 1 + times)
		return NULL;
	if (f & PERF_FORMAT_GROUP) {
		nr = pr_ld64(c.p);
		if (nr > (pr_cur_words(&c) - 1 - times) / per)
			return NULL;
		c.p += (1 + times + nr * per) * sizeof(uint64_t);
	} else if (!take_words(&c, times + per)) {
		return NULL;
	}
	out->read = v;
	out->read_nr = (uint32_t)nr;
	out->read_format = (uint32_t)f;
	if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
		out->time_enabled = pr_ld64((const uint8_t *)(v + 1));
	if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
		out->time_running = pr_ld64((const uint8_t *)(v + 1 + !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED)));
	return c.p;
}

static bool take_branches(struct pr_cur *c, bool hw_index, struct perfring_sample *out)
{
	uint64_t nr;

	if (!pr_cur_u64(c, &nr) || (hw_index && !pr_cur_u64(c, &out->branch_hw_idx)))
		return false;
	if (nr > pr_cur_words(c) / 3)
		return false;
	out->branches = (const struct perf_branch_entry *)c->p;
	out->branch_nr = nr;
	c->p += nr * 3 * sizeof(uint64_t);
	return true;
}

/* { abi, regs[nr] }, the registers absent when abi is 0 (a kernel thread). */
static bool take_regs(struct pr_cur *c, unsigned nr, uint64_t *abi, const uint64_t **regs)
{
	if (!pr_cur_u64(c, abi))
		return false;
	if (!*abi)
		return true;
	*regs = take_words(c, nr);
	return *regs != NULL;
}

/* { size, data[size], dyn_size }, or a lone size 0 without user registers. */
static bool take_stack(struct pr_cur *c, struct perfring_sample *out)
{
	uint64_t size;

	if (!pr_cur_u64(c, &size))
		return false;
	if (!size)
		return true;
	if (size & 7 || size / 8 >= pr_cur_words(c))
		return false;
	out->stack_user = c->p;
	out->stack_user_size = size;
	c->p += size;
	return pr_cur_u64(c, &out->stack_user_dyn_size) && out->stack_user_dyn_size <= size;
}

/* The one-u64 fields, each at its place in the order. */
static bool take_opt(struct pr_cur *c, uint64_t st, uint64_t bit, uint64_t *v)
{
	return !(st & bit) || pr_cur_u64(c, v);
}

static bool take_after_raw(struct pr_cur *c, const struct pr_layout *l, struct perfring_sample *out)
{
	uint64_t st = l->sample_type;

	return (!(st & PERF_SAMPLE_BRANCH_STACK) || take_branches(c, l->branch_hw_index, out)) &&
	       (!(st & PERF_SAMPLE_REGS_USER) ||
		take_regs(c, l->regs_user_nr, &out->regs_user_abi, &out->regs_user)) &&
	       (!(st & PERF_SAMPLE_STACK_USER) || take_stack(c, out)) &&
	       take_opt(c, st, PERF_SAMPLE_WEIGHT_TYPE, &out->weight) &&
	       take_opt(c, st, PERF_SAMPLE_DATA_SRC, &out->data_src) &&
	       take_opt(c, st, PERF_SAMPLE_TRANSACTION, &out->transaction) &&
	       (!(st & PERF_SAMPLE_REGS_INTR) ||
		take_regs(c, l->regs_intr_nr, &out->regs_intr_abi, &out->regs_intr)) &&
	       take_opt(c, st, PERF_SAMPLE_PHYS_ADDR, &out->phys_addr) &&
	       take_opt(c, st, PERF_SAMPLE_CGROUP, &out->cgroup) &&
	       take_opt(c, st, PERF_SAMPLE_DATA_PAGE_SIZE, &out->data_page_size) &&
	       take_opt(c, st, PERF_SAMPLE_CODE_PAGE_SIZE, &out->code_page_size);
}

int pr_profile_after_raw(struct pr_cur c, const struct pr_layout *l, struct perfring_sample *out)
{
	if (!take_after_raw(&c, l, out))
		return -EBADMSG;
	out->regs_user_nr = out->regs_user ? l->regs_user_nr : 0;
	out->regs_intr_nr = out->regs_intr ? l->regs_intr_nr : 0;
	return 0;
}

PERFRING_API int perfring_sample_read_value(const struct perfring_sample *s, uint32_t i,
					    struct perfring_read_value *out)
{
	uint32_t f;
	unsigned times, per;
	const uint64_t *v;

	if (!s || !out)
		return -EINVAL;
	if (!s->read)
		return -ENOENT;
	if (i >= s->read_nr)
		return -ERANGE;
	f = s->read_format;
	times = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
	per = 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);
	memset(out, 0, sizeof(*out));
	if (f & PERF_FORMAT_GROUP) {
		v = s->read + 1 + times + (size_t)i * per;
		out->value = pr_ld64((const uint8_t *)v);
		v++;
	} else {
		out->value = pr_ld64((const uint8_t *)s->read);
		v = s->read + 1 + times;
	}
	if (f & PERF_FORMAT_ID)
		out->id = pr_ld64((const uint8_t *)v++);
	if (f & PERF_FORMAT_LOST)
		out->lost = pr_ld64((const uint8_t *)v);
	return 0;
}
