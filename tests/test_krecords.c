/* SPDX-License-Identifier: MIT */
/* The profiler's kernel records (KSYMBOL, BPF_EVENT, CGROUP, NAMESPACES,
 * TEXT_POKE, ITRACE_START, AUX): each decoded, its strings NUL-checked, every
 * truncation refused, and in a ring a cut one counted corrupt. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/record.h"
#include "synthsession.h"

static const struct synth_fields tr = {
	.pid = 101, .tid = 102, .time = 0x1000000000ull, .id = 0xd1, .stream_id = 0x51,
	.cpu = 2, .identifier = 0xab,
};

struct body {
	uint8_t b[256];
	size_t n;
};

static void add(struct body *b, const void *p, size_t n)
{
	cr_assert_leq(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

#define ADD(b, v) add((b), &(v), sizeof(v))

static struct body ksymbol_body(const char *name, uint16_t flags)
{
	struct body b = { .n = 0 };
	uint64_t addr = 0xffffffffc0001000ull;
	uint32_t len = 0x1234;
	uint16_t type = PERF_RECORD_KSYMBOL_TYPE_BPF;

	ADD(&b, addr);
	ADD(&b, len);
	ADD(&b, type);
	ADD(&b, flags);
	add(&b, name, strlen(name) + 1);
	return b;
}

static struct body bpf_body(uint16_t type)
{
	struct body b = { .n = 0 };
	uint16_t flags = 0;
	uint32_t id = 4242;
	uint8_t tag[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	ADD(&b, type);
	ADD(&b, flags);
	ADD(&b, id);
	ADD(&b, tag);
	return b;
}

static struct body cgroup_body(uint64_t id, const char *path)
{
	struct body b = { .n = 0 };

	ADD(&b, id);
	add(&b, path, strlen(path) + 1);
	return b;
}

static struct body ns_body(uint64_t nr)
{
	struct body b = { .n = 0 };
	uint32_t pid = 7, tid = 8;

	ADD(&b, pid);
	ADD(&b, tid);
	ADD(&b, nr);
	for (uint64_t i = 0; i < nr; i++) {
		struct perf_ns_link_info l = { .dev = 100 + i, .ino = 4026531840ull + i };

		ADD(&b, l);
	}
	return b;
}

static struct body poke_body(uint16_t old_len, uint16_t new_len)
{
	struct body b = { .n = 0 };
	uint64_t addr = 0xffffffff81000000ull;
	uint8_t bytes[32];

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(0x90 + i);
	ADD(&b, addr);
	ADD(&b, old_len);
	ADD(&b, new_len);
	add(&b, bytes, (size_t)old_len + new_len);
	return b;
}

static struct body itrace_body(void)
{
	struct body b = { .n = 0 };
	uint32_t ids[2] = { 31, 32 };

	ADD(&b, ids);
	return b;
}

static struct body aux_body(void)
{
	struct body b = { .n = 0 };
	uint64_t v[3] = { 4096, 512, PERF_AUX_FLAG_TRUNCATED };

	ADD(&b, v);
	return b;
}

static struct perf_event_header *rec;

static size_t encode(uint8_t *buf, size_t cap, uint32_t type, const struct body *b,
		     uint64_t st)
{
	size_t len = synth_record(buf, cap, type, 0, b->b, b->n, st, &tr);

	cr_assert_gt(len, 0);
	return len;
}

static void decode_ok(uint32_t type, const struct body *b, uint64_t st, struct perfring_record *r)
{
	uint8_t buf[512];
	size_t len = encode(buf, sizeof(buf), type, b, st);

	free(rec);
	rec = malloc(len);
	cr_assert_not_null(rec);
	memcpy(rec, buf, len);
	memset(r, 0xa5, sizeof(*r));
	cr_assert_eq(pr_decode_record(rec, st, r), 0, "type %u", type);
	cr_assert_eq(r->type, type);
	cr_assert_eq(r->time, tr.time);
	cr_assert_eq(r->pid, tr.pid);
}

static bool inside(const void *p, size_t n)
{
	const uint8_t *b = (const uint8_t *)rec;

	return (const uint8_t *)p >= b && (const uint8_t *)p + n <= b + rec->size;
}

#define ST PR_SAMPLE_FORCED

Test(krecords, ksymbol)
{
	struct body b = ksymbol_body("bpf_prog_0123456789abcdef_prtest", 0);
	struct perfring_record r;

	decode_ok(PERF_RECORD_KSYMBOL, &b, ST, &r);
	cr_assert_eq(r.u.ksymbol.addr, 0xffffffffc0001000ull);
	cr_assert_eq(r.u.ksymbol.len, 0x1234);
	cr_assert_eq(r.u.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	cr_assert_eq(r.u.ksymbol.flags, 0);
	cr_assert_str_eq(r.u.ksymbol.name, "bpf_prog_0123456789abcdef_prtest");
	b = ksymbol_body("x", PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	decode_ok(PERF_RECORD_KSYMBOL, &b, SYNTH_TRAILER_BITS, &r);
	cr_assert_eq(r.u.ksymbol.flags, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	cr_assert_str_eq(r.u.ksymbol.name, "x");
	cr_assert(inside(r.u.ksymbol.name, 2));
	free(rec);
	rec = NULL;
}

Test(krecords, bpf_event)
{
	static const uint8_t tag[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct body b = bpf_body(PERF_BPF_EVENT_PROG_UNLOAD);
	struct perfring_record r;

	decode_ok(PERF_RECORD_BPF_EVENT, &b, ST, &r);
	cr_assert_eq(r.u.bpf_event.type, PERF_BPF_EVENT_PROG_UNLOAD);
	cr_assert_eq(r.u.bpf_event.id, 4242);
	cr_assert(inside(r.u.bpf_event.tag, 8));
	cr_assert_eq(memcmp(r.u.bpf_event.tag, tag, 8), 0);
	free(rec);
	rec = NULL;
}

Test(krecords, cgroup)
{
	struct body b = cgroup_body(0x5151, "/system.slice/prtest.scope");
	struct perfring_record r;

	decode_ok(PERF_RECORD_CGROUP, &b, ST, &r);
	cr_assert_eq(r.u.cgroup.id, 0x5151);
	cr_assert_str_eq(r.u.cgroup.path, "/system.slice/prtest.scope");
	free(rec);
	rec = NULL;
}

Test(krecords, namespaces)
{
	struct body b = ns_body(7);
	struct perfring_record r;

	decode_ok(PERF_RECORD_NAMESPACES, &b, ST, &r);
	cr_assert_eq(r.u.namespaces.pid, 7);
	cr_assert_eq(r.u.namespaces.tid, 8);
	cr_assert_eq(r.u.namespaces.nr, 7);
	cr_assert(inside(r.u.namespaces.links, 7 * sizeof(*r.u.namespaces.links)));
	cr_assert_eq(r.u.namespaces.links[PID_NS_INDEX].dev, 100 + PID_NS_INDEX);
	cr_assert_eq(r.u.namespaces.links[6].ino, 4026531846ull);
	b = ns_body(0);
	decode_ok(PERF_RECORD_NAMESPACES, &b, ST, &r);
	cr_assert_eq(r.u.namespaces.nr, 0);
	free(rec);
	rec = NULL;
}

Test(krecords, text_poke)
{
	struct body b = poke_body(5, 3);
	struct perfring_record r;

	decode_ok(PERF_RECORD_TEXT_POKE, &b, ST, &r);
	cr_assert_eq(r.u.text_poke.addr, 0xffffffff81000000ull);
	cr_assert_eq(r.u.text_poke.old_len, 5);
	cr_assert_eq(r.u.text_poke.new_len, 3);
	cr_assert_eq(r.u.text_poke.old_bytes[0], 0x90);
	cr_assert_eq(r.u.text_poke.new_bytes[0], 0x95);
	cr_assert(inside(r.u.text_poke.new_bytes, 3));
	b = poke_body(0, 0);
	decode_ok(PERF_RECORD_TEXT_POKE, &b, ST, &r);
	cr_assert_eq(r.u.text_poke.old_len + r.u.text_poke.new_len, 0);
	free(rec);
	rec = NULL;
}

Test(krecords, itrace_start_and_aux)
{
	struct body b = itrace_body();
	struct perfring_record r;

	decode_ok(PERF_RECORD_ITRACE_START, &b, ST, &r);
	cr_assert_eq(r.u.itrace_start.pid, 31);
	cr_assert_eq(r.u.itrace_start.tid, 32);
	b = aux_body();
	decode_ok(PERF_RECORD_AUX, &b, ST, &r);
	cr_assert_eq(r.u.aux.aux_offset, 4096);
	cr_assert_eq(r.u.aux.aux_size, 512);
	cr_assert_eq(r.u.aux.flags, PERF_AUX_FLAG_TRUNCATED);
	free(rec);
	rec = NULL;
}

/* Every record cut by 8-byte steps (records are 8-aligned) is malformed. */
static void truncations_fail(uint32_t type, const struct body *full)
{
	uint8_t buf[512];
	struct perfring_record r;
	size_t len = encode(buf, sizeof(buf), type, full, ST);

	for (size_t cut = len - 8; cut >= 8; cut -= 8) {
		struct perf_event_header *h = malloc(cut);

		cr_assert_not_null(h);
		memcpy(h, buf, cut);
		h->size = (uint16_t)cut;
		cr_assert_eq(pr_decode_record(h, ST, &r), -EBADMSG, "type %u size %zu of %zu", type,
			     cut, len);
		free(h);
	}
}

/* A length field one unit longer than the body holds. */
static void length_fails(uint32_t type, struct body b, size_t off, size_t width, uint64_t v)
{
	uint8_t buf[512];
	struct perfring_record r;
	struct perf_event_header *h;
	size_t len;

	memcpy(b.b + off, &v, width);
	len = encode(buf, sizeof(buf), type, &b, ST);
	h = malloc(len);
	cr_assert_not_null(h);
	memcpy(h, buf, len);
	cr_assert_eq(pr_decode_record(h, ST, &r), -EBADMSG, "type %u off %zu = %llu", type, off,
		     (unsigned long long)v);
	free(h);
}

Test(krecords, truncations_and_lengths_fail)
{
	struct body ks = ksymbol_body("bpf_prog_name", 0), cg = cgroup_body(1, "/a/b");
	struct body bp = bpf_body(1), ns = ns_body(3), tp = poke_body(8, 12); /* 32 B */
	struct body it = itrace_body(), ax = aux_body();

	truncations_fail(PERF_RECORD_KSYMBOL, &ks);
	truncations_fail(PERF_RECORD_BPF_EVENT, &bp);
	truncations_fail(PERF_RECORD_CGROUP, &cg);
	truncations_fail(PERF_RECORD_NAMESPACES, &ns);
	truncations_fail(PERF_RECORD_TEXT_POKE, &tp);
	truncations_fail(PERF_RECORD_ITRACE_START, &it);
	truncations_fail(PERF_RECORD_AUX, &ax);
	length_fails(PERF_RECORD_NAMESPACES, ns, 8, 8, 4);
	length_fails(PERF_RECORD_NAMESPACES, ns, 8, 8, UINT64_MAX / 8);
	length_fails(PERF_RECORD_TEXT_POKE, tp, 8, 2, 9);  /* old_len 8 -> 9 */
	length_fails(PERF_RECORD_TEXT_POKE, tp, 10, 2, 13); /* new_len 12 -> 13 */
	length_fails(PERF_RECORD_TEXT_POKE, tp, 8, 4, 0xffffffffu);
}

/* Strings must end inside the body: one filling it with no NUL is refused. */
/* pr_decode_record of b as a type record, on an exact-size heap copy (so
 * that ASan sees a read past its end). */
static int decode_exact(uint32_t type, const struct body *b)
{
	uint8_t buf[256];
	struct perfring_record r;
	struct perf_event_header *h;
	size_t len = encode(buf, sizeof(buf), type, b, ST);
	int err;

	h = malloc(len);
	cr_assert_not_null(h);
	memcpy(h, buf, len);
	err = pr_decode_record(h, ST, &r);
	free(h);
	return err;
}

Test(krecords, strings_without_nul)
{
	struct body ks = ksymbol_body("abcdefg", 0), cg = cgroup_body(1, "/abcdef");

	/* Names of 8 and 8 bytes end the body exactly, their NUL replaced. */
	ks.b[ks.n - 1] = 'h';
	cg.b[cg.n - 1] = 'g';
	cr_assert_eq(decode_exact(PERF_RECORD_KSYMBOL, &ks), -EBADMSG);
	cr_assert_eq(decode_exact(PERF_RECORD_CGROUP, &cg), -EBADMSG);
}

/* ------------------------------------------------------- in a ring */

struct seen {
	int n[32];
	int bad;
};

static int on_record(const struct perfring_record *r, void *ctx)
{
	struct seen *s = ctx;

	if (r->type < 32)
		s->n[r->type]++;
	if (r->type == PERF_RECORD_CGROUP && strcmp(r->u.cgroup.path, "/a/b"))
		s->bad++;
	return 0;
}

/* Each record, then a copy cut by 8 bytes, then each again: the cut ones
 * are corrupt and every whole one is delivered, in every form of parse. */
Test(krecords, cut_records_in_a_ring_are_corrupt_and_the_rest_delivered)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY };
	const struct { uint32_t type; struct body b; } recs[] = {
		{ PERF_RECORD_KSYMBOL, ksymbol_body("bpf_prog_x", 0) },
		{ PERF_RECORD_BPF_EVENT, bpf_body(1) },
		{ PERF_RECORD_CGROUP, cgroup_body(9, "/a/b") },
		{ PERF_RECORD_NAMESPACES, ns_body(7) },
		{ PERF_RECORD_TEXT_POKE, poke_body(4, 4) },
		{ PERF_RECORD_ITRACE_START, itrace_body() },
		{ PERF_RECORD_AUX, aux_body() },
	};
	const size_t nrec = sizeof(recs) / sizeof(recs[0]);
	struct synth_session b;
	struct synth_fields t = tr;
	struct seen seen;
	uint8_t buf[512];

	cr_assert_eq(synth_session_new(&b, 1, 1 << 16, &a, NULL, NULL), 0);
	b.s->reg.sink = (struct pr_sink){ on_record, &seen, PERFRING_REC_ALL };
	t.identifier = t.id = synth_leader_id(0);
	for (size_t i = 0; i < nrec; i++) {
		size_t len = synth_record(buf, sizeof(buf), recs[i].type, 0, recs[i].b.b,
					  recs[i].b.n, PR_SAMPLE_FORCED, &t);
		struct perf_event_header *h = (struct perf_event_header *)buf;

		cr_assert_eq(synth_put(&b.rings[0], buf, len), 0);
		h->size = (uint16_t)(len - 8);
		/* The cut one keeps its id where a whole trailer's would be. */
		memcpy(buf + len - 16, &t.identifier, 8);
		cr_assert_eq(synth_put(&b.rings[0], buf, len - 8), 0);
		len = synth_record(buf, sizeof(buf), recs[i].type, 0, recs[i].b.b, recs[i].b.n,
				   PR_SAMPLE_FORCED, &t);
		cr_assert_eq(synth_put(&b.rings[0], buf, len), 0);
	}
	for (int form = 0; form < SYNTH__FORMS; form++) {
		struct perfring_cpu_stats st;
		int n;

		synth_session_rewind(&b);
		memset(&seen, 0, sizeof(seen));
		n = synth_session_parse(&b, (enum synth_form)form);
		if (n == -ENOTSUP)
			continue;
		cr_assert_eq(n, 0);
		for (size_t i = 0; i < nrec; i++)
			cr_assert_eq(seen.n[recs[i].type], 2, "%s: type %u seen %d times",
				     synth_form_name[form], recs[i].type, seen.n[recs[i].type]);
		cr_assert_eq(seen.bad, 0);
		cr_assert_eq(perfring_session_cpu_stats(b.s, 0, &st), 0);
		cr_assert_eq(st.corrupt, nrec, "%s", synth_form_name[form]);
	}
	synth_session_free(&b);
}

/* KSYMBOL records reach the callback only when asked for: the leader asks
 * the kernel for them to carry CGROUP and NAMESPACES records too. */
Test(krecords, ksymbol_not_asked_for_is_dropped)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY };
	struct body ks = ksymbol_body("bpf_prog_x", 0), cgb = cgroup_body(9, "/a/b");
	struct synth_session b;
	struct synth_fields t = tr;
	struct seen seen = { 0 };
	uint8_t buf[512];
	size_t len;

	cr_assert_eq(synth_session_new(&b, 1, 1 << 12, &a, NULL, NULL), 0);
	b.s->reg.sink = (struct pr_sink){ on_record, &seen, PERFRING_REC_CGROUP };
	t.identifier = t.id = synth_leader_id(0);
	len = synth_record(buf, sizeof(buf), PERF_RECORD_KSYMBOL, 0, ks.b, ks.n, PR_SAMPLE_FORCED, &t);
	cr_assert_eq(synth_put(&b.rings[0], buf, len), 0);
	len = synth_record(buf, sizeof(buf), PERF_RECORD_CGROUP, 0, cgb.b, cgb.n, PR_SAMPLE_FORCED, &t);
	cr_assert_eq(synth_put(&b.rings[0], buf, len), 0);
	cr_assert_eq(perfring_session_parse_all(b.s), 0);
	cr_assert_eq(seen.n[PERF_RECORD_KSYMBOL], 0);
	cr_assert_eq(seen.n[PERF_RECORD_CGROUP], 1);
	synth_session_free(&b);
}
