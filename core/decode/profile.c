/* SPDX-License-Identifier: MIT */
/* The profiler's sample parts (READ, branches, registers, user stack, memory
 * and page fields), each bounds-checked, in the kernel's perf_output_sample order. */
#include "decode/record.h"

#include <errno.h>
#include <string.h>

/* A bounds-checked cursor over the rest of one sample. */
struct pcur { const uint8_t *p, *end; };

static size_t words_left(const struct pcur *c)
{
	return (size_t)(c->end - c->p) / sizeof(uint64_t);
}

static bool take64(struct pcur *c, uint64_t *v)
{
	if (words_left(c) < 1)
		return false;
	*v = pr_ld64(c->p);
	c->p += sizeof(*v);
	return true;
}

/* n u64s at c: their address, or NULL when the record is shorter. */
static const uint64_t *take_words(struct pcur *c, uint64_t n)
{
	const uint64_t *w = (const uint64_t *)c->p;

	if (n > words_left(c))
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
static bool take_read(struct pcur *c, const struct pr_layout *l, struct perfring_sample *out)
{
	uint64_t f = l->read_format, nr = 1;
	unsigned times = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
	unsigned per = 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);
	const uint64_t *v = (const uint64_t *)c->p;

	if (words_left(c) < 1 + times)
		return false;
	if (f & PERF_FORMAT_GROUP) {
		nr = pr_ld64(c->p);
		if (nr > (words_left(c) - 1 - times) / per)
			return false;
		c->p += (1 + times + nr * per) * sizeof(uint64_t);
	} else if (!take_words(c, times + per)) {
		return false;
	}
	out->read = v;
	out->read_nr = (uint32_t)nr;
	out->read_format = (uint32_t)f;
	if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
		out->time_enabled = pr_ld64((const uint8_t *)(v + 1));
	if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
		out->time_running = pr_ld64((const uint8_t *)(v + 1 + !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED)));
	return true;
}

static bool take_branches(struct pcur *c, const struct pr_layout *l, struct perfring_sample *out)
{
	uint64_t nr;

	if (!take64(c, &nr) || (l->branch_hw_index && !take64(c, &out->branch_hw_idx)))
		return false;
	if (nr > words_left(c) / 3)
		return false;
	out->branches = (const struct perf_branch_entry *)c->p;
	out->branch_nr = nr;
	c->p += nr * 3 * sizeof(uint64_t);
	return true;
}

/* { abi, regs[nr] }, the registers absent when abi is 0 (a kernel thread). */
static bool take_regs(struct pcur *c, unsigned nr, uint64_t *abi, const uint64_t **regs)
{
	if (!take64(c, abi))
		return false;
	if (!*abi)
		return true;
	*regs = take_words(c, nr);
	return *regs != NULL;
}

/* { size, data[size], dyn_size }, or a lone size 0 without user registers. */
static bool take_stack(struct pcur *c, struct perfring_sample *out)
{
	uint64_t size;

	if (!take64(c, &size))
		return false;
	if (!size)
		return true;
	if (size & 7 || size / 8 >= words_left(c))
		return false;
	out->stack_user = c->p;
	out->stack_user_size = size;
	c->p += size;
	return take64(c, &out->stack_user_dyn_size) && out->stack_user_dyn_size <= size;
}

/* The one-u64 fields, each at its place in the order. */
static bool take_opt(struct pcur *c, uint64_t st, uint64_t bit, uint64_t *v)
{
	return !(st & bit) || take64(c, v);
}

static bool take_after_raw(struct pcur *c, const struct pr_layout *l, struct perfring_sample *out)
{
	uint64_t st = l->sample_type;

	return (!(st & PERF_SAMPLE_BRANCH_STACK) || take_branches(c, l, out)) &&
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

int pr_decode_profile(const uint8_t *p, const uint8_t *end, const struct pr_layout *l,
		      struct perfring_sample *out)
{
	struct pcur c = { p, end };

	pr_profile_zero(out);
	if ((l->sample_type & PERF_SAMPLE_READ) && !take_read(&c, l, out))
		return -EBADMSG;
	c.p = pr_sample_tail_at(c.p, end, l->sample_type, out);
	if (!c.p || !take_after_raw(&c, l, out))
		return -EBADMSG;
	out->regs_user_nr = out->regs_user ? l->regs_user_nr : 0;
	out->regs_intr_nr = out->regs_intr ? l->regs_intr_nr : 0;
	return 0;
}

int pr_decode_sample_attr(const struct perf_event_header *h, const struct perf_event_attr *attr,
			  struct perfring_sample *out)
{
	struct pr_layout l;

	pr_layout_init(&l, attr->sample_type);
	pr_layout_profile(&l, attr);
	return pr_decode_sample_fast(h, &l, out);
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
