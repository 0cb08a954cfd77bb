/* SPDX-License-Identifier: MIT */
/* A backward ring's records: the walk from the head, and the copy oldest first. */
#include "kernel/backward.h"

#include <linux/perf_event.h>
#include <string.h>

static uint16_t size_at(const uint8_t *data, uint64_t mask, uint64_t pos)
{
	struct perf_event_header h;

	memcpy(&h, data + (pos & mask), sizeof(h));
	return h.size;
}

void pr_bwd_find(const uint8_t *data, uint64_t size, uint64_t head, uint64_t since,
		 uint64_t room, struct pr_bwd_range *r)
{
	uint64_t pos = 0, mask = size - 1;
	uint16_t n;

	r->len = r->nrec = 0;
	r->end = PR_BWD_ALL;
	if (room > size)
		room = size;
	if (head & 7) {
		r->end = since ? PR_BWD_BAD : PR_BWD_ALL;
		return;
	}
	/* Each step moves pos by 8 or more, so the walk ends within
	 * room / 8 steps whatever the bytes hold. */
	while (pos < since) {
		if (pos + sizeof(struct perf_event_header) > room) {
			r->end = PR_BWD_TORN;
			break;
		}
		n = size_at(data, mask, head + pos);
		if (n < sizeof(struct perf_event_header) || (n & 7) || pos + n > since) {
			r->end = PR_BWD_BAD;
			break;
		}
		if (pos + n > room) {
			r->end = PR_BWD_TORN;
			break;
		}
		pos += n;
		r->nrec++;
	}
	r->len = pos;
}

void pr_bwd_copy_out(const uint8_t *data, uint64_t size, uint64_t head, uint64_t n,
		     uint8_t *out)
{
	uint64_t off = head & (size - 1), first = size - off < n ? size - off : n;

	memcpy(out, data + off, first);
	memcpy(out + first, data, n - first);
}

void pr_bwd_reverse(const uint8_t *data, uint64_t size, uint64_t head,
		    const struct pr_bwd_range *r, uint8_t *out)
{
	uint64_t pos = 0, i;
	uint16_t n;

	/* The newest record goes last: the one at pos ends len - pos into out. */
	for (i = 0; i < r->nrec; i++) {
		n = size_at(data, size - 1, head + pos);
		pr_bwd_copy_out(data, size, head + pos, n, out + r->len - pos - n);
		pos += n;
	}
}
