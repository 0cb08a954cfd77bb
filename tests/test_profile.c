/* SPDX-License-Identifier: MIT */
/* decode/profile.c: every profiler sample type alone and together, their
 * variants, every truncation, and the same records in synthetic rings. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "synthsession.h"

#define FMT_ALL                                                                      \
	(PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | \
	 PERF_FORMAT_ID | PERF_FORMAT_LOST)

static const uint64_t cc[3] = { 0xffffffff81000010ull, 0x401020, 0x401030 };
static const uint8_t raw[12] = "raw-payload";
static const uint64_t rd_group[9] = { 2, 1000, 900, 11, 0xa1, 1, 22, 0xa2, 2 };
static const struct perf_branch_entry br[2] = {
	{ .from = 0x1000, .to = 0x2000 }, { .from = 0x3000, .to = 0x4000, .mispred = 1 },
};
static const uint64_t ru[3] = { 0xb0b0, 0x7ffc0000, 0x401234 };
static const uint64_t ri[2] = { 0xc1, 0xc2 };
static uint8_t stack[32] = "canary-bytes-of-the-user-stack!";

static const struct synth_fields base = {
	.identifier = 0x1111, .ip = 0x2222, .pid = 3, .tid = 4, .time = 0x5555, .cpu = 1,
	.period = 0x8888, .callchain = cc, .callchain_nr = 3, .raw = raw, .raw_size = sizeof(raw),
};

static const struct synth_prof prof = {
	.read = rd_group, .read_words = 9, .br = br, .br_nr = 2, .hw_idx = 0x77,
	.regs_user_abi = PERF_SAMPLE_REGS_ABI_64, .regs_user = ru,
	.stack = stack, .stack_size = sizeof(stack), .stack_dyn = 24,
	.weight = 0x0003000200000001ull, .data_src = 0xd5, .transaction = 0x7a,
	.regs_intr_abi = PERF_SAMPLE_REGS_ABI_64, .regs_intr = ri,
	.phys_addr = 0x9a000, .cgroup = 0xc9, .data_page_size = 4096, .code_page_size = 2 << 20,
};

#define ST_PROFILE_ALL (PR_SAMPLE_PROFILE & ~PERF_SAMPLE_WEIGHT)

static struct perf_event_attr attr_of(uint64_t st)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .sample_type = st, .read_format = FMT_ALL,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX,
		.sample_regs_user = PERFRING_REGS_X86_64_DEFAULT, .sample_regs_intr = 0x3,
		.sample_stack_user = sizeof(stack),
	};

	return a;
}

static struct perf_event_header *exact(const uint8_t *buf, size_t len)
{
	struct perf_event_header *h = malloc(len ? len : 1);

	cr_assert_not_null(h);
	memcpy(h, buf, len);
	h->size = (uint16_t)len;
	return h;
}

static size_t make(uint8_t *buf, size_t cap, const struct perf_event_attr *a)
{
	size_t len = synth_sample_prof(buf, cap, a, &base, &prof);

	cr_assert_gt(len, 0);
	return len;
}

static void decode_ok(const struct perf_event_attr *a, struct perfring_sample *s,
		      struct perf_event_header **hp)
{
	uint8_t buf[1024];
	size_t len = make(buf, sizeof(buf), a);

	*hp = exact(buf, len);
	memset(s, 0xa5, sizeof(*s));
	cr_assert_eq(pr_decode_sample_attr(*hp, a, s), 0, "sample_type %#llx",
		     (unsigned long long)a->sample_type);
}

static const uint8_t *rec_end(const struct perf_event_header *h)
{
	return (const uint8_t *)h + h->size;
}

static void check_read_group(const struct perfring_sample *s)
{
	struct perfring_read_value v;

	cr_assert_eq(s->read_nr, 2);
	cr_assert_eq(s->read_format, FMT_ALL);
	cr_assert_eq(s->time_enabled, 1000);
	cr_assert_eq(s->time_running, 900);
	cr_assert_eq(perfring_sample_read_value(s, 0, &v), 0);
	cr_assert(v.value == 11 && v.id == 0xa1 && v.lost == 1);
	cr_assert_eq(perfring_sample_read_value(s, 1, &v), 0);
	cr_assert(v.value == 22 && v.id == 0xa2 && v.lost == 2);
	cr_assert_eq(perfring_sample_read_value(s, 2, &v), -ERANGE);
}

static void check_after_raw(const struct perfring_sample *s)
{
	cr_assert_eq(s->branch_nr, 2);
	cr_assert_eq(s->branch_hw_idx, 0x77);
	cr_assert_eq(memcmp(s->branches, br, sizeof(br)), 0);
	cr_assert_eq(s->regs_user_abi, PERF_SAMPLE_REGS_ABI_64);
	cr_assert_eq(s->regs_user_nr, 3);
	cr_assert_eq(memcmp(s->regs_user, ru, sizeof(ru)), 0);
	cr_assert_eq(s->stack_user_size, sizeof(stack));
	cr_assert_eq(s->stack_user_dyn_size, 24);
	cr_assert_eq(memcmp(s->stack_user, stack, sizeof(stack)), 0);
	cr_assert_eq(s->weight, prof.weight);
	cr_assert_eq(s->data_src, 0xd5);
	cr_assert_eq(s->transaction, 0x7a);
	cr_assert_eq(s->regs_intr_abi, PERF_SAMPLE_REGS_ABI_64);
	cr_assert_eq(s->regs_intr_nr, 2);
	cr_assert_eq(memcmp(s->regs_intr, ri, sizeof(ri)), 0);
	cr_assert_eq(s->phys_addr, 0x9a000);
	cr_assert_eq(s->cgroup, 0xc9);
	cr_assert_eq(s->data_page_size, 4096);
	cr_assert_eq(s->code_page_size, 2 << 20);
}

Test(profile, every_type_together_in_kernel_order)
{
	struct perf_event_attr a = attr_of(PR_SAMPLE_FORCED | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
					   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | ST_PROFILE_ALL);
	struct perf_event_header *h;
	struct perfring_sample s;

	decode_ok(&a, &s, &h);
	cr_assert_eq(s.ip, 0x2222);
	cr_assert_eq(s.period, 0x8888);
	/* READ sits between PERIOD and CALLCHAIN. */
	cr_assert_eq((const uint8_t *)s.read, (const uint8_t *)h + 8 + 6 * 8);
	check_read_group(&s);
	cr_assert_eq(s.callchain_nr, 3);
	cr_assert_eq((const uint8_t *)s.callchain, (const uint8_t *)(s.read + 9) + 8);
	cr_assert_eq(memcmp(s.raw, raw, sizeof(raw)), 0);
	check_after_raw(&s);
	/* The last field ends the record. */
	cr_assert_eq(pr_ld64(rec_end(h) - 8), 2 << 20);
	free(h);
}

/* Each bit alone: its field is set, every other profiler field is zero. */
Test(profile, each_type_alone)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_READ, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER,
		PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_WEIGHT_STRUCT,
		PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_REGS_INTR,
		PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_CGROUP, PERF_SAMPLE_DATA_PAGE_SIZE,
		PERF_SAMPLE_CODE_PAGE_SIZE,
	};

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		struct perf_event_attr a = attr_of(bits[i]);
		struct perf_event_header *h;
		struct perfring_sample s;
		uint64_t b = bits[i];

		decode_ok(&a, &s, &h);
		cr_assert_eq(s.read != NULL, b == PERF_SAMPLE_READ, "bit %#llx", (unsigned long long)b);
		if (s.read)
			check_read_group(&s);
		cr_assert_eq(s.branch_nr ? 1 : 0, b == PERF_SAMPLE_BRANCH_STACK);
		cr_assert_eq(s.regs_user_nr ? 3 : 0, b == PERF_SAMPLE_REGS_USER ? 3 : 0);
		cr_assert_eq(s.stack_user_size ? 1 : 0, b == PERF_SAMPLE_STACK_USER);
		cr_assert_eq(s.weight ? 1 : 0, !!(b & PERF_SAMPLE_WEIGHT_TYPE));
		cr_assert_eq(s.data_src ? 1 : 0, b == PERF_SAMPLE_DATA_SRC);
		cr_assert_eq(s.transaction ? 1 : 0, b == PERF_SAMPLE_TRANSACTION);
		cr_assert_eq(s.regs_intr_nr ? 2 : 0, b == PERF_SAMPLE_REGS_INTR ? 2 : 0);
		cr_assert_eq(s.phys_addr ? 1 : 0, b == PERF_SAMPLE_PHYS_ADDR);
		cr_assert_eq(s.cgroup ? 1 : 0, b == PERF_SAMPLE_CGROUP);
		cr_assert_eq(s.data_page_size ? 1 : 0, b == PERF_SAMPLE_DATA_PAGE_SIZE);
		cr_assert_eq(s.code_page_size ? 1 : 0, b == PERF_SAMPLE_CODE_PAGE_SIZE);
		cr_assert_eq(s.callchain_nr, 0);
		cr_assert_null(s.raw);
		free(h);
	}
}

/* Every record shorter by 1 to 8 bytes and by every further 8 fails. */
static void truncations_fail(const struct perf_event_attr *a)
{
	uint8_t buf[1024];
	size_t len = make(buf, sizeof(buf), a);

	for (size_t cut = len - 1; cut >= 8; cut -= cut > len - 8 ? 1 : 8) {
		struct perf_event_header *h = exact(buf, cut);
		struct perfring_sample s;

		cr_assert_eq(pr_decode_sample_attr(h, a, &s), -EBADMSG, "st %#llx size %zu of %zu",
			     (unsigned long long)a->sample_type, cut, len);
		free(h);
	}
}

Test(profile, every_truncation_fails)
{
	for (uint64_t b = 1; b <= PERF_SAMPLE_WEIGHT_STRUCT; b <<= 1) {
		struct perf_event_attr a;

		if (!(b & PR_SAMPLE_PROFILE))
			continue;
		a = attr_of(b | PERF_SAMPLE_IDENTIFIER);
		truncations_fail(&a);
	}
	struct perf_event_attr all = attr_of(PR_SAMPLE_FORCED | PERF_SAMPLE_CALLCHAIN |
					     PERF_SAMPLE_RAW | ST_PROFILE_ALL);
	truncations_fail(&all);
}

/* A length inside the record that claims one unit more than is there. */
static void patched_fails(const struct perf_event_attr *a, size_t word, uint64_t v)
{
	uint8_t buf[1024];
	size_t len = make(buf, sizeof(buf), a);
	struct perf_event_header *h;
	struct perfring_sample s;

	memcpy(buf + 8 + 8 * word, &v, sizeof(v));
	h = exact(buf, len);
	cr_assert_eq(pr_decode_sample_attr(h, a, &s), -EBADMSG, "word %zu = %llu", word,
		     (unsigned long long)v);
	free(h);
}

Test(profile, lengths_past_the_end_fail)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_READ);

	patched_fails(&a, 0, 3);                 /* group nr 2 -> 3 */
	patched_fails(&a, 0, UINT64_MAX / 3);    /* nr * 3 would wrap */
	a = attr_of(PERF_SAMPLE_BRANCH_STACK);
	patched_fails(&a, 0, 3);                 /* 2 branches -> 3 */
	patched_fails(&a, 0, UINT64_MAX);
	a = attr_of(PERF_SAMPLE_STACK_USER);
	patched_fails(&a, 0, sizeof(stack) + 8); /* size past the end */
	patched_fails(&a, 0, sizeof(stack) - 1); /* not a multiple of 8 */
	patched_fails(&a, 5, sizeof(stack) + 8); /* dyn_size above size */
	patched_fails(&a, 0, UINT64_MAX - 7);
}

Test(profile, read_formats_without_group)
{
	static const uint64_t fmts[] = {
		0, PERF_FORMAT_ID, PERF_FORMAT_ID | PERF_FORMAT_LOST,
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID | PERF_FORMAT_LOST,
		PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST,
		PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST,
	};

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		uint64_t f = fmts[i], words[5], n = 0, te = !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED);
		struct perf_event_attr a = attr_of(PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD);
		struct synth_prof p = prof;
		struct perfring_read_value v;
		struct perf_event_header *h;
		struct perfring_sample s;
		uint8_t buf[256];

		words[n++] = 42;
		if (te)
			words[n++] = 500;
		if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
			words[n++] = 400;
		if (f & PERF_FORMAT_ID)
			words[n++] = 0xe1;
		if (f & PERF_FORMAT_LOST)
			words[n++] = 7;
		a.read_format = f;
		p.read = words;
		p.read_words = n;
		h = exact(buf, synth_sample_prof(buf, sizeof(buf), &a, &base, &p));
		cr_assert_eq(pr_decode_sample_attr(h, &a, &s), 0, "fmt %#llx", (unsigned long long)f);
		cr_assert_eq(s.read_nr, 1);
		cr_assert_eq(s.time_enabled, te ? 500 : 0);
		cr_assert_eq(s.time_running, f & PERF_FORMAT_TOTAL_TIME_RUNNING ? 400 : 0);
		cr_assert_eq(perfring_sample_read_value(&s, 0, &v), 0);
		cr_assert_eq(v.value, 42);
		cr_assert_eq(v.id, f & PERF_FORMAT_ID ? 0xe1 : 0);
		cr_assert_eq(v.lost, f & PERF_FORMAT_LOST ? 7 : 0);
		cr_assert_eq(rec_end(h), (const uint8_t *)(s.read + n));
		free(h);
	}
}

/* Without HW_INDEX the entries follow nr at once. */
Test(profile, branch_stack_without_hw_index)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_DATA_SRC);
	struct perf_event_header *h;
	struct perfring_sample s;

	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	decode_ok(&a, &s, &h);
	cr_assert_eq(s.branch_nr, 2);
	cr_assert_eq(s.branch_hw_idx, 0);
	cr_assert_eq((const uint8_t *)s.branches, (const uint8_t *)h + 16);
	cr_assert_eq(s.branches[1].to, 0x4000);
	cr_assert_eq(s.data_src, 0xd5);
	free(h);
}

/* A kernel thread's sample: abi 0 and no registers, a lone stack size 0,
 * and what follows still in its place. */
Test(profile, no_user_regs_and_no_stack)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
					   PERF_SAMPLE_WEIGHT | PERF_SAMPLE_REGS_INTR |
					   PERF_SAMPLE_CGROUP);
	struct synth_prof p = prof;
	struct perf_event_header *h;
	struct perfring_sample s;
	uint8_t buf[256];

	p.regs_user_abi = 0;
	p.stack_size = 0;
	h = exact(buf, synth_sample_prof(buf, sizeof(buf), &a, &base, &p));
	cr_assert_eq(h->size, 8 + 8 * (2 + 1 + 3 + 1));
	cr_assert_eq(pr_decode_sample_attr(h, &a, &s), 0);
	cr_assert_eq(s.regs_user_abi, 0);
	cr_assert_null(s.regs_user);
	cr_assert_eq(s.regs_user_nr, 0);
	cr_assert_null(s.stack_user);
	cr_assert_eq(s.stack_user_size, 0);
	cr_assert_eq(s.weight, prof.weight);
	cr_assert_eq(s.regs_intr_nr, 2);
	cr_assert_eq(s.cgroup, 0xc9);
	free(h);
}

/* A sample without profiler bits, of the general layout or of a fixed shape
 * (forced fields, tracepoint), leaves none of a reused struct's fields. */
Test(profile, plain_sample_zeroes_profile_fields)
{
	static const uint64_t sts[] = { PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD, PR_SAMPLE_FORCED,
					PR_SAMPLE_TRACEPOINT };
	static const uint8_t zero[sizeof(struct perfring_sample)];
	size_t off = offsetof(struct perfring_sample, read);

	for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		struct perf_event_attr a = attr_of(sts[i]);
		struct perfring_sample s;
		uint8_t buf[256];
		struct perf_event_header *h = exact(buf, synth_sample(buf, sizeof(buf), sts[i], &base));

		memset(&s, 0xa5, sizeof(s));
		cr_assert_eq(pr_decode_sample_attr(h, &a, &s), 0);
		cr_assert_eq(memcmp((const uint8_t *)&s + off, zero, sizeof(s) - off), 0,
			     "sample_type %#llx", (unsigned long long)sts[i]);
		cr_assert_eq(perfring_sample_read_value(&s, 0, &(struct perfring_read_value){ 0 }),
			     -ENOENT);
		free(h);
	}
}

/* --------------------------------------------------- in synthetic rings */

struct tally {
	size_t n;
	uint64_t cgroup_sum;
	bool bad;
};

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	struct tally *t = ctx;

	t->n++;
	t->cgroup_sum += s->cgroup;
	if (s->read_nr != 2 || s->branch_nr != 2 || s->regs_user_nr != 3 ||
	    s->stack_user_dyn_size != 24 || memcmp(s->regs_user, ru, sizeof(ru)))
		t->bad = true;
	return 0;
}

/* Each truncation of the whole sample in a ring, between two good ones:
 * counted corrupt, and the good one after it still delivered, in every
 * form of parse. */
Test(profile, truncated_in_a_ring_is_corrupt_and_the_next_delivered)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
					   ST_PROFILE_ALL);
	struct synth_session b;
	struct tally t = { 0 };
	struct synth_fields f = base;
	uint8_t rec[1024];
	size_t len, cuts = 0, off;

	cr_assert_eq(synth_session_new(&b, 1, 1 << 20, &a, on_sample, &t), 0);
	cr_assert_gt(synth_session_template(&b, 0, &f, rec, sizeof(rec)), 0);
	a = *perfring_event_attr(b.ev);
	len = synth_sample_prof(rec, sizeof(rec), &a, &f, &prof);
	cr_assert_gt(len, 0);
	off = synth_time_offset(a.sample_type);
	for (size_t cut = len - 8; cut >= 16; cut -= 8, cuts++) {
		struct perf_event_header *h = (struct perf_event_header *)rec;

		cr_assert_eq(synth_session_put(&b, 0, rec, len, off, 2 * cuts + 1), 0);
		h->size = (uint16_t)cut;
		cr_assert_eq(synth_session_put(&b, 0, rec, cut, off, 2 * cuts + 2), 0);
		h->size = (uint16_t)len;
	}
	cr_assert_eq(synth_session_put(&b, 0, rec, len, off, 2 * cuts + 1), 0);
	for (int form = 0; form < SYNTH__FORMS; form++) {
		struct perfring_cpu_stats st;
		int n;

		synth_session_rewind(&b);
		t = (struct tally){ 0 };
		n = synth_session_parse(&b, (enum synth_form)form);
		if (n == -ENOTSUP)
			continue;
		cr_assert_eq(n, (int)cuts + 1, "%s: %d of %zu", synth_form_name[form], n, cuts + 1);
		cr_assert_eq(t.n, cuts + 1);
		cr_assert_not(t.bad, "%s", synth_form_name[form]);
		cr_assert_eq(t.cgroup_sum, (cuts + 1) * 0xc9);
		cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
		cr_assert_eq(st.corrupt, cuts, "%s", synth_form_name[form]);
	}
	synth_session_free(&b);
}

/* A pr_sbuf reused from an event with profiler fields to one without must
 * not show the first one's: each sample of the plain event has them zero. */
struct mixed {
	struct perfring_event *prof, *plain;
	size_t prof_n, plain_n, bad;
	int fill; /* a pull's: what the items held, which a plain item may keep */
};

static int on_mixed(const struct perfring_sample *s, void *ctx)
{
	struct mixed *m = ctx;
	static const uint8_t zero[sizeof(struct perfring_sample)];
	uint8_t fill[sizeof(struct perfring_sample)];
	size_t off = offsetof(struct perfring_sample, read), n = sizeof(*s) - off;

	if (s->event == m->prof) {
		m->prof_n++;
		m->bad += s->cgroup != 0xc9 || s->regs_user_nr != 3;
	} else {
		m->plain_n++;
		/* Zero, or (pulled) as the item held it: never the other's. */
		memset(fill, m->fill, sizeof(fill));
		m->bad += memcmp((const uint8_t *)s + off, zero, n) != 0 &&
			  memcmp((const uint8_t *)s + off, fill, n) != 0;
	}
	return 0;
}

Test(profile, plain_event_after_a_profile_event_shows_none_of_its_fields)
{
	struct perf_event_attr pa = attr_of(PERF_SAMPLE_IP | PERF_SAMPLE_CGROUP | PERF_SAMPLE_REGS_USER);
	struct perf_event_attr na = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
				      .sample_type = PERF_SAMPLE_IP };
	struct mixed m = { 0 };
	struct synth_event_spec specs[2] = { { &pa, on_mixed, &m }, { &na, on_mixed, &m } };
	static const int order[] = { 0, 0, 1, 1, 0, 1, 0, 0, 0, 1 };
	const size_t n = sizeof(order) / sizeof(order[0]);
	struct synth_session b;
	uint8_t rec[2][512];
	size_t len[2], off[2];

	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	cr_assert_eq(synth_session_new_events(&b, 2, 1 << 16, specs, 2), 0);
	m.prof = b.evs[0];
	m.plain = b.evs[1];
	for (size_t k = 0; k < 2; k++) {
		struct synth_fields f = base;
		struct perf_event_attr a = *perfring_event_attr(b.evs[k]);

		f.callchain_nr = 0;
		f.raw_size = 0;
		cr_assert_gt(synth_session_template_k(&b, 0, k, &f, rec[k], sizeof(rec[k])), 0);
		len[k] = synth_sample_prof(rec[k], sizeof(rec[k]), &a, &f, &prof);
		off[k] = synth_time_offset(a.sample_type);
	}
	for (size_t ring = 0; ring < 2; ring++)
		for (size_t i = 0; i < n; i++) {
			struct synth_fields f = base;
			size_t k = (size_t)order[(i + ring) % n];
			struct perf_event_attr a = *perfring_event_attr(b.evs[k]);

			f.callchain_nr = 0;
			f.raw_size = 0;
			synth_session_template_k(&b, ring, k, &f, rec[k], sizeof(rec[k]));
			len[k] = synth_sample_prof(rec[k], sizeof(rec[k]), &a, &f, &prof);
			cr_assert_eq(synth_session_put(&b, ring, rec[k], len[k], off[k],
						       10 * i + ring + 1), 0);
		}
	/* The batch pull into items that hold anything (0xa5 bytes). */
	for (size_t ring = 0; ring < 2; ring++) {
		struct perfring_item items[8];
		int got;

		synth_session_rewind(&b);
		m.prof_n = m.plain_n = m.bad = 0;
		m.fill = 0xa5;
		memset(items, 0xa5, sizeof(items));
		while ((got = perfring_cpu_pull(b.s, (int)ring, items, 8)) > 0)
			for (int i = 0; i < got; i++) {
				cr_assert_eq(items[i].kind, PERFRING_NEXT_SAMPLE);
				on_mixed(&items[i].u.sample, &m);
				memset(&items[i], 0xa5, sizeof(items[i]));
			}
		cr_assert_eq(got, 0, "cpu_pull: %d", got);
		cr_assert_eq(m.prof_n + m.plain_n, n);
		cr_assert_eq(m.bad, 0, "cpu_pull: %zu items with another event's fields", m.bad);
	}
	for (int form = 0; form < SYNTH__FORMS; form++) {
		int got;

		synth_session_rewind(&b);
		m.prof_n = m.plain_n = m.bad = 0;
		m.fill = 0; /* a callback's sample has them zero */
		got = synth_session_parse(&b, (enum synth_form)form);
		if (got == -ENOTSUP)
			continue;
		cr_assert_eq(got, 2 * (int)n, "%s", synth_form_name[form]);
		cr_assert_eq(m.bad, 0, "%s: %zu samples with another event's fields",
			     synth_form_name[form], m.bad);
		cr_assert_eq(m.prof_n + m.plain_n, 2 * n);
	}
	synth_session_free(&b);
}
