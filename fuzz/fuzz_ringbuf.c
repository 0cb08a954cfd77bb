/* SPDX-License-Identifier: MIT */
/*
 * The BPF ring buffer reader (pr_rb_next/consume/commit/recheck and the
 * pr_rbuf drain and merge face over them) on hostile rings.
 * fuzz-sources: core/kernel/ringbuf.c core/read/ringbuf.c core/base/err.c core/base/sys.c
 *
 * Input: the data size's log2 (3..16, so 8 B to 64 KiB), the consumer and
 * producer positions (8 bytes each), then the data, then a script of ops:
 * drains with a budget, peek/deliver, end, the producer moving on, a header
 * word rewritten (BUSY/DISCARD/lengths), direct next/consume steps. The data
 * is in an exact-size heap block, its two copies back to back as the
 * kernel's double mapping has them, so any read past them is an ASan error.
 * Traps if a record is handed out outside the two copies or longer than the
 * data, if the consumer position passes the producer's, if a commit does not
 * store the local position, if a drain exceeds its budget, if an -EIO is not
 * sticky, or if the stats do not add up.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ringbuf.h"
#include "read/ringbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

struct fz {
	uint8_t *prod;            /* 8 bytes of producer position, then data x2 */
	uint64_t *cons;           /* 8 bytes */
	uint64_t size, start, delivered, bytes;
	struct pr_rbuf rb;
	struct perfring_event ev;
	struct pr_registry reg;
	struct pr_errbuf err;
	unsigned calls, stop_every;
};

static uint64_t take64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void check_rec(const struct fz *z, const uint8_t *rec, uint32_t len)
{
	const uint8_t *lo = z->prod + 8, *hi = lo + 2 * z->size;

	CHECK(rec >= lo + 8 && rec <= hi && len <= z->size && len <= (uint64_t)(hi - rec));
}

static int cb(const struct perfring_sample *s, void *ctx)
{
	struct fz *z = ctx;

	check_rec(z, s->raw, s->raw_size);
	CHECK(s->cpu == -1 && s->event == &z->ev && !s->pid && !s->tid);
	z->delivered++;
	z->bytes += s->raw_size;
	return z->stop_every && ++z->calls % z->stop_every == 0;
}

static uint64_t prod_pos(const struct fz *z)
{
	return take64(z->prod);
}

/* The consumer never passes the producer, counted from where both began. */
static void check_pos(const struct fz *z)
{
	const struct pr_rb_map *m = &z->rb.map;

	if (z->rb.err)
		return;
	CHECK(m->cons_pos - z->start <= prod_pos(z) - z->start);
}

static void set_word(struct fz *z, uint64_t off, uint32_t w)
{
	off &= (z->size - 1) & ~7ull;
	memcpy(z->prod + 8 + off, &w, 4);
	memcpy(z->prod + 8 + z->size + off, &w, 4);
}

static void op_drain(struct fz *z, unsigned max)
{
	bool more, stopped;
	int err = z->rb.err;
	uint64_t before = z->delivered;
	int n = pr_rbuf_drain(&z->rb, max, &more, &stopped);

	if (err) {
		CHECK(n == err);
		return;
	}
	if (n == -EIO) {
		CHECK(z->rb.err == -EIO);
		return;
	}
	CHECK(n >= 0 && (uint64_t)n == z->delivered - before);
	CHECK(!max || (unsigned)n <= max);
	CHECK(!stopped || n > 0);
	CHECK(!more || (max && (unsigned)n == max) || stopped);
	CHECK(*z->cons == z->rb.map.cons_pos);
}

static void op_step(struct fz *z)
{
	const void *rec;
	uint32_t len;
	uint64_t disc = 0, at = z->rb.map.cons_pos;
	int r;

	if (z->rb.err)
		return;
	r = pr_rb_next(&z->rb.map, &rec, &len, &disc);
	CHECK(r == 1 || r == 0 || r == -EIO);
	if (r == 1) {
		check_rec(z, rec, len);
		pr_rb_consume(&z->rb.map);
		/* Skipped discards and the record: 8 bytes each at least. */
		CHECK(z->rb.map.cons_pos - at >= 8 * (disc + 1) + len);
	}
	if (r == -EIO) {
		z->rb.err = -EIO; /* as the drain would find it: it reads no more */
		return;
	}
	pr_rb_commit(&z->rb.map);
	CHECK(*z->cons == z->rb.map.cons_pos);
	(void)pr_rb_recheck(&z->rb.map);
}

static void run(struct fz *z, const uint8_t *ops, size_t n)
{
	uint64_t t, p;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		switch (ops[i] & 7) {
		case 0:
		case 1:
			op_drain(z, ops[i] >> 3);
			break;
		case 2:
			if (pr_rbuf_peek(&z->rb, &t)) {
				k = pr_rbuf_deliver(&z->rb);
				CHECK(k == 1 || k == -1);
			}
			CHECK(pr_rbuf_deliver(&z->rb) == 0);
			break;
		case 3:
			(void)pr_rbuf_end(&z->rb);
			CHECK(*z->cons == z->rb.map.cons_pos);
			break;
		case 4:
			p = prod_pos(z) + 8 * (uint64_t)(ops[i] >> 3);
			memcpy(z->prod, &p, 8);
			break;
		case 5:
			if (i + 4 < n) {
				uint32_t w;

				memcpy(&w, ops + i + 1, 4);
				set_word(z, z->rb.map.cons_pos + 8 * (uint64_t)(ops[i] >> 3), w);
				i += 4;
			}
			break;
		case 6:
			op_step(z);
			break;
		default:
			z->stop_every = ops[i] >> 3;
			break;
		}
		check_pos(z);
	}
	op_drain(z, 0);
	CHECK(z->rb.st.records == z->delivered);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz z;
	uint64_t ring, cons, prod, take;
	const uint8_t *ops;
	size_t nops;

	if (size < 17)
		return 0;
	ring = 1ull << (3 + data[0] % 14);
	cons = take64(data + 1) & ~7ull;
	prod = take64(data + 9);
	/* Mostly sane distances, so that the records get read; any at times. */
	if (data[0] & 0x80)
		prod = cons + (prod % (ring + 16));
	data += 17;
	size -= 17;
	take = size < ring ? size : ring;
	memset(&z, 0, sizeof(z));
	z.size = ring;
	z.prod = calloc(1, 8 + 2 * ring);
	z.cons = malloc(8);
	if (!z.prod || !z.cons) {
		free(z.prod);
		free(z.cons);
		return 0;
	}
	memcpy(z.prod, &prod, 8);
	memcpy(z.prod + 8, data, take);
	memcpy(z.prod + 8 + ring, data, take);
	*z.cons = cons;
	ops = data + take;
	nops = size - take;
	CHECK(pr_rb_init(&z.rb.map, (uint8_t *)z.cons, z.prod, ring, 8) == 0);
	z.start = cons;
	z.reg.err = &z.err;
	z.ev.reg = &z.reg;
	z.ev.fn = cb;
	z.ev.ctx = &z;
	z.rb.ev = &z.ev;
	z.rb.timed = ops != NULL && nops && (ops[0] & 1);
	z.rb.time_offset = nops > 1 ? ops[1] : 0;
	run(&z, ops, nops);
	free(z.prod);
	free(z.cons);
	return 0;
}
