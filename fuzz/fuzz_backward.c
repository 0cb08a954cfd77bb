/* SPDX-License-Identifier: MIT */
/*
 * The backward (overwrite) ring's walk from the head on hostile bytes.
 * fuzz-sources: core/kernel/backward.c
 *
 * Input: head, since and room (8 bytes each), then the ring's bytes (the
 * largest power of two that fits, 8 B to 64 KiB) in an exact-size heap copy.
 * pr_bwd_find must stay within since, room and the ring, and count at most
 * one record per 8 bytes; pr_bwd_reverse's output, in an exact-size buffer,
 * must read forward as the same number of whole records filling it.
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/backward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static uint64_t take64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void check_forward(const uint8_t *out, const struct pr_bwd_range *g)
{
	struct perf_event_header h;
	uint64_t pos = 0, n = 0;

	while (pos < g->len) {
		CHECK(g->len - pos >= sizeof(h));
		memcpy(&h, out + pos, sizeof(h));
		CHECK(h.size >= sizeof(h) && !(h.size & 7) && h.size <= g->len - pos);
		pos += h.size;
		n++;
	}
	CHECK(pos == g->len && n == g->nrec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr_bwd_range g;
	uint64_t head, since, room, ring = 8;
	uint8_t *copy, *out;

	if (size < 24 + 8)
		return 0;
	head = take64(data);
	since = take64(data + 8);
	room = take64(data + 16);
	while (ring * 2 <= size - 24 && ring < 65536)
		ring *= 2;
	if (!(copy = malloc(ring)))
		return 0;
	memcpy(copy, data + 24, ring);
	pr_bwd_find(copy, ring, head, since, room, &g);
	CHECK(g.len <= since && g.len <= ring && g.len <= room);
	CHECK(g.nrec <= ring / 8 && g.len >= 8 * g.nrec);
	CHECK(g.end == PR_BWD_ALL || g.end == PR_BWD_TORN || g.end == PR_BWD_BAD);
	CHECK(g.end != PR_BWD_ALL || g.len == since);
	out = malloc(g.len ? g.len : 1);
	if (out) {
		pr_bwd_reverse(copy, ring, head, &g, out);
		check_forward(out, &g);
		free(out);
	}
	free(copy);
	return 0;
}
