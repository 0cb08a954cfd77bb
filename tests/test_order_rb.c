/* SPDX-License-Identifier: MIT */
/*
 * Timed BPF ring buffers in the merge (pr_merge_set_ringbufs): a ring buffer
 * crafted in memory as the kernel lays it out (a memfd: consumer page,
 * producer page, the data mapped twice), written by "several CPUs" so that
 * its reservation order is not time order, beside two synthetic perf rings.
 * With a window covering the writers' delays, every record of both kinds
 * comes out once, in time order, and kept records wait in a sorted copy;
 * without one, the ring buffer's records come out of order (how this test
 * fails with the window disabled). R1 holds for the ring buffer too.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/ringbuf.h"
#include "read/merge.h"
#include "synthsession.h"

#define TOTAL 12000
#define T0 1000000000ull
#define RB_SIZE (1u << 20)

struct fake {
	int fd;
	size_t page, len;
	uint8_t *res, *cons, *prod, *data;
	uint64_t prod_pos;
	struct pr_rbuf rb;
	struct perfring_event ev;
	struct pr_registry reg;
	struct pr_errbuf err;
};

static void fake_open(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->len = 2 * f->page + RB_SIZE;
	f->fd = memfd_create("rbfake", MFD_CLOEXEC);
	cr_assert_geq(f->fd, 0);
	cr_assert_eq(ftruncate(f->fd, (off_t)f->len), 0);
	f->res = mmap(NULL, 4 * f->page + 2 * RB_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	cr_assert_neq(f->res, MAP_FAILED);
	f->cons = f->res + f->page;
	f->prod = f->cons + f->page;
	f->data = f->prod + f->page;
	cr_assert_neq(mmap(f->cons, f->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd,
			   0), MAP_FAILED);
	cr_assert_neq(mmap(f->data + RB_SIZE, RB_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_FIXED, f->fd, (off_t)(2 * f->page)), MAP_FAILED);
	cr_assert_eq(pr_rb_init(&f->rb.map, f->cons, f->prod, RB_SIZE, f->page), 0);
	snprintf(f->ev.name, sizeof(f->ev.name), "fake");
	f->reg.err = &f->err;
	f->ev.reg = &f->reg;
	f->rb.ev = &f->ev;
	f->rb.map_fd = -1;
	f->rb.timed = true;
	f->rb.time_offset = 0;
}

static void fake_close(struct fake *f)
{
	munmap(f->res, 4 * f->page + 2 * RB_SIZE);
	close(f->fd);
}

/* A committed record: its time, then its sequence number. */
static void fake_put(struct fake *f, uint64_t time, uint64_t seq)
{
	uint64_t off = f->prod_pos & (RB_SIZE - 1);
	uint32_t hdr[2] = { 16, 0 };

	memcpy(f->data + off + 8, &time, 8);
	memcpy(f->data + off + 16, &seq, 8);
	memcpy(f->data + off, hdr, sizeof(hdr));
	f->prod_pos += 24;
	__atomic_store_n((uint64_t *)f->prod, f->prod_pos, __ATOMIC_RELEASE);
}

struct seen {
	uint64_t n, last_time, bad_order, dup, rb_n;
	uint8_t got[TOTAL];
	struct perfring_session *s;
	int busy;
	bool reenter;
};

static void see(struct seen *v, uint64_t time, uint64_t seq)
{
	if (time < v->last_time)
		v->bad_order++;
	v->last_time = time;
	if (seq >= TOTAL || v->got[seq]++)
		v->dup++;
	v->n++;
}

static int on_sample(const struct perfring_sample *smp, void *ctx)
{
	see(ctx, smp->time, smp->pid);
	return 0;
}

static int on_rb(const struct perfring_sample *smp, void *ctx)
{
	struct seen *v = ctx;
	uint64_t seq;

	cr_assert_eq(smp->raw_size, 16);
	cr_assert_eq(smp->cpu, -1);
	memcpy(&seq, (const uint8_t *)smp->raw + 8, 8);
	see(v, smp->time, seq);
	v->rb_n++;
	/* R1: the merge holds the ring buffer. */
	if (v->reenter && pr_rbuf_drain(&((struct fake *)v->s)->rb, 0, NULL, NULL) == -EBUSY)
		v->busy++;
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

struct rec {
	uint32_t where; /* 0, 1: the perf rings; 2: the ring buffer */
	uint64_t t, vis;
};

static int by_vis(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->vis < y->vis ? -1 : x->vis > y->vis ? 1 : x->t < y->t ? -1 : x->t > y->t;
}

/* Runs the model; returns the records out of order at the callbacks. */
static uint64_t run(uint64_t window, uint64_t delay, bool reenter)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = 1 };
	struct rec *m = calloc(TOTAL, sizeof(*m));
	uint64_t *seq = calloc(TOTAL, sizeof(*seq));
	struct seen *v = calloc(1, sizeof(*v));
	struct fake *f = calloc(1, sizeof(*f));
	struct pr_rbuf *rbp;
	struct synth_session b;
	uint64_t last_vis[2] = { 0 }, t = T0, s = 7, now, out;
	struct pr_pass p;
	size_t j, w = 0;

	cr_assert(m && v && f && seq);
	for (j = 0; j < TOTAL; j++) {
		t += rnd(&s) % 1500;
		m[j].where = (uint32_t)(rnd(&s) % 3);
		m[j].t = t;
		m[j].vis = t + rnd(&s) % (delay + 1);
		/* A perf ring shows its records in order; a ring buffer shows
		 * each when its writer commits it. */
		if (m[j].where < 2 && m[j].vis < last_vis[m[j].where])
			m[j].vis = last_vis[m[j].where];
		if (m[j].where < 2)
			last_vis[m[j].where] = m[j].vis;
	}
	{
		/* Each record carries its index (stamp order) as seq; then the
		 * records in the order they show up. */
		struct { struct rec r; uint64_t seq; } *o = calloc(TOTAL, sizeof(*o));

		cr_assert_not_null(o);
		for (j = 0; j < TOTAL; j++)
			o[j].r = m[j], o[j].seq = j;
		qsort(o, TOTAL, sizeof(*o), by_vis);
		for (j = 0; j < TOTAL; j++)
			m[j] = o[j].r, seq[j] = o[j].seq;
		free(o);
	}
	fake_open(f);
	f->ev.fn = on_rb;
	f->ev.ctx = v;
	v->s = (struct perfring_session *)f; /* on_rb's way to the ring buffer */
	v->reenter = reenter;
	cr_assert_eq(synth_session_new(&b, 2, 1u << 20, &a, on_sample, v), 0);
	rbp = &f->rb;
	cr_assert_eq(pr_merge_set_ringbufs(b.s->merge, &rbp, 1), 0);
	for (now = T0; w < TOTAL || now < m[TOTAL - 1].vis + window + 100000; now += 50000) {
		while (w < TOTAL && m[w].vis <= now) {
			if (m[w].where == 2) {
				fake_put(f, m[w].t, seq[w]);
			} else {
				struct synth_fields fl = { .pid = (uint32_t)seq[w], .tid = 1,
							   .time = m[w].t };
				uint8_t buf[256];
				size_t len = synth_session_template(&b, m[w].where, &fl, buf,
								    sizeof(buf));

				cr_assert_eq(synth_session_put(&b, m[w].where, buf, len,
							       synth_time_offset(
								       synth_session_sample_type(&b)),
							       m[w].t), 0);
			}
			w++;
		}
		do {
			p = (struct pr_pass){ .window = window, .now = now };
			cr_assert_geq(pr_merge_pass(b.s->merge, &p), 0);
		} while (p.more);
	}
	/* Anything still kept goes without the window. */
	p = (struct pr_pass){ 0 };
	cr_assert_geq(pr_merge_pass(b.s->merge, &p), 0);
	cr_expect_eq(v->n, TOTAL, "delivered %llu of %d", (unsigned long long)v->n, TOTAL);
	cr_expect_eq(v->dup, 0);
	cr_expect_gt(v->rb_n, TOTAL / 4, "the ring buffer gave %llu", (unsigned long long)v->rb_n);
	cr_expect_eq(f->rb.st.records, v->rb_n);
	cr_expect_eq(f->rb.st.bytes, 16 * v->rb_n);
	cr_expect_eq(__atomic_load_n((uint64_t *)f->cons, __ATOMIC_ACQUIRE), f->prod_pos,
		     "the consumer position was not committed to the end");
	if (reenter)
		cr_expect_eq((uint64_t)v->busy, v->rb_n, "a drain inside the merge was not -EBUSY");
	out = v->bad_order;
	synth_session_free(&b);
	fake_close(f);
	free(f);
	free(m);
	free(seq);
	free(v);
	return out;
}

Test(order_rb, window_sorts_a_ring_buffer_with_the_rings)
{
	uint64_t bad = run(400000, 400000, false);

	cr_expect_eq(bad, 0, "%llu records out of time order", (unsigned long long)bad);
}

Test(order_rb, r1_a_drain_inside_the_merge_is_busy)
{
	cr_expect_eq(run(400000, 400000, true), 0);
}

/* The same stream without the window: reservation order shows. */
Test(order_rb, without_the_window_it_comes_out_of_order)
{
	cr_expect_gt(run(0, 400000, false), 0, "the model tests nothing");
}

/* The kept copies alone: sorted by time (equal times as added), room
 * reused once copies went, the byte limit refused, never grown past. */
Test(order_rb, kept_copies_sorted_and_bounded)
{
	struct pr_kept k = { .max = 256 };
	uint64_t x, want[] = { 1, 2, 3, 3, 5 };
	uint32_t i, seq = 0;

	cr_assert_eq(pr_kept_add(&k, 5, &(uint64_t){ 50 }, 8), 0);
	cr_assert_eq(pr_kept_add(&k, 3, &(uint64_t){ 30 }, 8), 0);
	cr_assert_eq(pr_kept_add(&k, 1, &(uint64_t){ 10 }, 8), 0);
	cr_assert_eq(pr_kept_add(&k, 3, &(uint64_t){ 31 }, 8), 0);
	cr_assert_eq(pr_kept_add(&k, 2, &(uint64_t){ 20 }, 8), 0);
	for (i = 0; i < 5; i++) {
		cr_expect_eq(k.rec[k.head + i].time, want[i]);
		memcpy(&x, k.bytes + k.rec[k.head + i].off, 8);
		cr_expect_eq(x / 10, want[i], "copy %u holds %llu", i, (unsigned long long)x);
	}
	memcpy(&x, k.bytes + k.rec[k.head + 3].off, 8);
	cr_expect_eq(x, 31, "equal times out of the order added");
	/* Up to the limit, then -ENOSPC; after some went, room again. */
	uint8_t rec24[24] = { 0 };

	while (memcpy(rec24, &seq, sizeof(seq)), pr_kept_add(&k, 100 + seq, rec24, 24) == 0)
		seq++;
	cr_expect_leq(k.used, k.max);
	cr_expect_leq(k.size, k.max);
	cr_expect_eq(pr_kept_add(&k, 1000, rec24, 24), -ENOSPC);
	k.head += 3; /* three delivered */
	memcpy(rec24, &(uint64_t){ 77 }, 8);
	cr_expect_eq(pr_kept_add(&k, 2000, rec24, 24), 0);
	memcpy(&x, k.bytes + k.rec[k.n - 1].off, 8);
	cr_expect_eq(x, 77);
	memcpy(&x, k.bytes + k.rec[k.head].off, 8);
	cr_expect_eq(x, 31, "the compaction moved the wrong bytes");
	pr_kept_free(&k);
}
