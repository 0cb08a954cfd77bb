/* SPDX-License-Identifier: MIT */
/* Samples buffered between a drain and the loop's check phase: their header
 * fields in one array, their RAW payloads copied into one arena, so the ring
 * space is handed back to the kernel before JavaScript runs. */
#include "pn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Grows *p (elem bytes each) to hold at least need entries. */
static int reserve(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 256;
	void *grown;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	if (!(grown = realloc(*p, n * elem)))
		return -ENOMEM;
	*p = grown;
	*cap = n;
	return 0;
}

int pn_buf_push(struct pn_buf *b, uint32_t ev, const struct perfring_sample *s)
{
	uint32_t raw = s->raw ? s->raw_size : 0;
	struct pn_rec *r;

	/* raw_off is 32 bits and the batch's ArrayBuffer one allocation. */
	if (b->raw_n + raw > UINT32_MAX || b->n >= UINT32_MAX ||
	    reserve((void **)&b->rec, &b->cap, b->n + 1, sizeof(*b->rec)) ||
	    reserve((void **)&b->raw, &b->raw_cap, b->raw_n + raw, 1)) {
		b->dropped++;
		return -ENOMEM;
	}
	r = &b->rec[b->n++];
	r->ev = ev;
	r->cpu = (uint32_t)s->cpu;
	r->pid = s->pid;
	r->tid = s->tid;
	r->time = s->time;
	r->raw_off = (uint32_t)b->raw_n;
	r->raw_size = raw;
	if (raw)
		memcpy(b->raw + b->raw_n, s->raw, raw);
	b->raw_n += raw;
	return 0;
}

void pn_buf_reset(struct pn_buf *b)
{
	b->n = 0;
	b->raw_n = 0;
}

void pn_buf_free(struct pn_buf *b)
{
	free(b->rec);
	free(b->raw);
	memset(b, 0, sizeof(*b));
}
