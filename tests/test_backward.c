/* The backward range finder on synthetic rings, honest and hostile. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/backward.h"
#include <linux/perf_event.h>

#define RING 256u

struct bring {
	uint8_t data[RING];
	uint64_t head; /* counts down from 0, as the kernel's does */
};

/* Writes a record of size bytes (>= 16) carrying seq, as the kernel
 * would: below the head, which then points at it. */
static void put(struct bring *r, uint16_t size, uint64_t seq)
{
	uint8_t rec[512] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };
	uint64_t i;

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &seq, sizeof(seq));
	r->head -= size;
	for (i = 0; i < size; i++)
		r->data[(r->head + i) & (RING - 1)] = rec[i];
}

static void set_size(struct bring *r, uint64_t pos, uint16_t size)
{
	memcpy(r->data + ((r->head + pos) & (RING - 1)) + 6, &size, sizeof(size));
}

/* The records of the range, oldest first, must carry first, first+1, ... */
static void expect_seqs(const struct bring *r, const struct pr_bwd_range *g, uint64_t first)
{
	uint8_t *out = malloc(g->len ? g->len : 1);
	uint64_t pos = 0, k = first, seq;
	struct perf_event_header h;

	cr_assert(out);
	pr_bwd_reverse(r->data, RING, r->head, g, out);
	while (pos < g->len) {
		memcpy(&h, out + pos, sizeof(h));
		memcpy(&seq, out + pos + 8, sizeof(seq));
		cr_assert_eq(seq, k, "record at %llu carries %llu, want %llu",
			     (unsigned long long)pos, (unsigned long long)seq, (unsigned long long)k);
		cr_assert_geq(h.size, 16);
		pos += h.size;
		k++;
	}
	cr_expect_eq(k - first, g->nrec);
	free(out);
}

/* n records written from head 0, of size bytes each (0: 40, 16, 16, ...). */
static void fill(struct bring *r, uint64_t n, uint16_t size)
{
	uint64_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n; i++)
		put(r, size ? size : (uint16_t)(i % 3 ? 16 : 40), i);
}

/* Everything since the start, the whole ring intact: what the walk finds. */
static const struct {
	const char *what;
	uint64_t n;
	uint16_t size;
	enum pr_bwd_end end;
	uint64_t nrec;          /* 0: whatever fills the ring but for a torn one */
} whole[] = {
	{ "a ring not yet full gives every record", 3, 24, PR_BWD_ALL, 3 },
	/* 480 bytes into 256: one record's body crosses the ring's end. */
	{ "a wrapped ring gives the newest whole records", 20, 24, PR_BWD_TORN, RING / 24 },
	{ "mixed sizes stop before the torn one", 30, 0, PR_BWD_TORN, 0 },
	{ "a ring filled exactly holds all of it", 16, 16, PR_BWD_ALL, 16 },
	{ "one more than fills it drops the oldest", 17, 16, PR_BWD_TORN, 16 },
};

Test(backward, walks_over_whole_rings)
{
	struct bring r;
	struct pr_bwd_range g;
	size_t c;

	for (c = 0; c < sizeof(whole) / sizeof(whole[0]); c++) {
		fill(&r, whole[c].n, whole[c].size);
		pr_bwd_find(r.data, RING, r.head, 0 - r.head, RING, &g);
		cr_expect_eq(g.end, whole[c].end, "%s", whole[c].what);
		if (whole[c].nrec)
			cr_expect_eq(g.nrec, whole[c].nrec, "%s: %llu", whole[c].what,
				     (unsigned long long)g.nrec);
		/* Nothing whole is left out: the next record would not fit. */
		cr_expect(g.end == PR_BWD_ALL || g.len + 40 > RING, "%s: stopped early at %llu",
			  whole[c].what, (unsigned long long)g.len);
		expect_seqs(&r, &g, whole[c].n - g.nrec);
	}
}

Test(backward, since_limits_the_walk_to_what_is_new)
{
	struct bring r;
	struct pr_bwd_range g;

	fill(&r, 8, 24);
	pr_bwd_find(r.data, RING, r.head, 48, RING, &g);
	cr_expect_eq(g.end, PR_BWD_ALL);
	cr_expect_eq(g.nrec, 2);
	expect_seqs(&r, &g, 6);
	pr_bwd_find(r.data, RING, r.head, 0, RING, &g);
	cr_expect_eq(g.end, PR_BWD_ALL);
	cr_expect_eq(g.len, 0);
	/* A record that crosses the previous head cannot be the kernel's. */
	pr_bwd_find(r.data, RING, r.head, 40, RING, &g);
	cr_expect_eq(g.end, PR_BWD_BAD);
	cr_expect_eq(g.nrec, 1);
}

Test(backward, room_cuts_what_the_kernel_wrote_over)
{
	struct bring r;
	struct pr_bwd_range g;

	fill(&r, 8, 24);
	pr_bwd_find(r.data, RING, r.head, 0 - r.head, 100, &g);
	cr_expect_eq(g.end, PR_BWD_TORN);
	cr_expect_eq(g.nrec, 4);
	expect_seqs(&r, &g, 4);
	pr_bwd_find(r.data, RING, r.head, 0 - r.head, 0, &g);
	cr_expect_eq(g.end, PR_BWD_TORN);
	cr_expect_eq(g.len, 0);
}

Test(backward, hostile_headers_end_the_walk)
{
	static const uint16_t bad[] = { 0, 4, 12, 20 };
	struct bring r;
	struct pr_bwd_range g;
	size_t b;

	for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		fill(&r, 8, 24);
		set_size(&r, 48, bad[b]); /* the third newest */
		pr_bwd_find(r.data, RING, r.head, 0 - r.head, RING, &g);
		cr_expect_eq(g.end, PR_BWD_BAD, "size %u", bad[b]);
		cr_expect_eq(g.nrec, 2, "size %u", bad[b]);
		expect_seqs(&r, &g, 6);
	}
	/* Oversized: past what is new, or past the ring. */
	set_size(&r, 0, 0xfff8);
	pr_bwd_find(r.data, RING, r.head, 0 - r.head, RING, &g);
	cr_expect_eq(g.end, PR_BWD_BAD);
	cr_expect_eq(g.len, 0);
	pr_bwd_find(r.data, RING, r.head, UINT64_MAX, RING, &g);
	cr_expect_eq(g.end, PR_BWD_TORN);
	cr_expect_eq(g.len, 0);
	/* An unaligned head. */
	pr_bwd_find(r.data, RING, r.head + 4, 64, RING, &g);
	cr_expect_eq(g.end, PR_BWD_BAD);
	cr_expect_eq(g.len, 0);
	/* Unwritten memory (size 0) with a huge since: no loop. */
	memset(&r, 0, sizeof(r));
	pr_bwd_find(r.data, RING, 0, UINT64_MAX, UINT64_MAX, &g);
	cr_expect_eq(g.end, PR_BWD_BAD);
	cr_expect_eq(g.len, 0);
}

Test(backward, random_bytes_never_read_out_of_bounds)
{
	uint8_t *data = malloc(RING), *out;
	struct pr_bwd_range g;
	unsigned seed = 21;
	uint64_t head, since, room;
	int i, j;

	cr_assert(data);
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < (int)RING; j++)
			data[j] = (uint8_t)(rand_r(&seed) % 4 ? rand_r(&seed) % 64 : rand_r(&seed));
		head = (uint64_t)rand_r(&seed) * 8;
		since = rand_r(&seed) % 2 ? (uint64_t)(rand_r(&seed) % 512) : UINT32_MAX;
		room = (uint64_t)(rand_r(&seed) % 300);
		pr_bwd_find(data, RING, head, since, room, &g);
		cr_assert_leq(g.len, since);
		cr_assert_leq(g.len, room > RING ? RING : room);
		cr_assert_leq(g.nrec, RING / 8);
		out = malloc(g.len ? g.len : 1);
		cr_assert(out);
		pr_bwd_reverse(data, RING, head, &g, out);
		free(out);
	}
	free(data);
}
