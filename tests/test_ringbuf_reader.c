/* SPDX-License-Identifier: MIT */
/*
 * The BPF ring buffer reader (core/kernel/ringbuf, core/read/ringbuf) over
 * rings crafted in memory the way the kernel lays them out: a memfd holding
 * the consumer page, the producer page and the data, the data mapped twice in
 * a row, and PROT_NONE pages around it all, so that a read outside the
 * mapping traps (and ASan sees any other). The test writes as the kernel's
 * producer does: header with BUSY, producer position, then the length without
 * BUSY (or with DISCARD).
 */
#include "kernel/ringbuf.h"
#include "read/ringbuf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct fake {
	int fd;
	size_t page, size, len;
	uint8_t *res;       /* the reservation: guard, cons, prod, data x2, guard */
	uint8_t *cons, *prod, *data;
	uint64_t prod_pos;  /* the producer's */
	struct pr_rbuf rb;
	struct perfring_event ev;
	struct pr_registry reg;
	struct pr_errbuf err;
};

static void fake_open(struct fake *f, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->size = size;
	f->len = 2 * f->page + size;
	f->fd = memfd_create("rbfake", MFD_CLOEXEC);
	cr_assert_geq(f->fd, 0);
	cr_assert_eq(ftruncate(f->fd, (off_t)f->len), 0);
	f->res = mmap(NULL, 4 * f->page + 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(f->res, MAP_FAILED);
	f->cons = f->res + f->page;
	f->prod = f->cons + f->page;
	f->data = f->prod + f->page;
	cr_assert_neq(mmap(f->cons, f->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f->fd, 0),
		      MAP_FAILED);
	cr_assert_neq(mmap(f->data + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			   f->fd, (off_t)(2 * f->page)),
		      MAP_FAILED);
	cr_assert_eq(pr_rb_init(&f->rb.map, f->cons, f->prod, size, f->page), 0);
	snprintf(f->ev.name, sizeof(f->ev.name), "fake");
	f->reg.err = &f->err;
	f->ev.reg = &f->reg;
	f->rb.ev = &f->ev;
	f->rb.map_fd = -1;
}

static void fake_close(struct fake *f)
{
	munmap(f->res, 4 * f->page + 2 * f->size);
	close(f->fd);
}

static void set_prod(struct fake *f, uint64_t pos)
{
	__atomic_store_n((uint64_t *)f->prod, pos, __ATOMIC_RELEASE);
}

static uint64_t cons_page(const struct fake *f)
{
	return __atomic_load_n((const uint64_t *)f->cons, __ATOMIC_ACQUIRE);
}

/* Reserves a record of len bytes (BUSY), its bytes seq, seq+1, ...; returns
 * its position. */
static uint64_t reserve(struct fake *f, uint32_t len, uint8_t seq)
{
	uint64_t at = f->prod_pos, off = at & (f->size - 1);
	uint32_t hdr[2] = { len | PR_RB_BUSY, 0 };
	uint32_t i;

	memcpy(f->data + off, hdr, sizeof(hdr)); /* the double map: may wrap */
	for (i = 0; i < len; i++)
		f->data[off + 8 + i] = (uint8_t)(seq + i);
	f->prod_pos += (len + 8 + 7) & ~7u;
	set_prod(f, f->prod_pos);
	return at;
}

static void commit(struct fake *f, uint64_t at, uint32_t flags)
{
	uint32_t *h = (uint32_t *)(f->data + (at & (f->size - 1)));

	__atomic_store_n(h, (*h & ~PR_RB_BUSY) | flags, __ATOMIC_RELEASE);
}

static uint64_t put(struct fake *f, uint32_t len, uint8_t seq)
{
	uint64_t at = reserve(f, len, seq);

	commit(f, at, 0);
	return at;
}

/* What the callback saw. */
struct seen {
	uint64_t n, bad, bytes, time_sum;
	uint32_t last_len;
	uint8_t next_seq;
	bool check_seq;
	uint64_t stop_at;      /* stop after this many (0: never) */
	struct pr_rbuf *rb;    /* for re-entry */
	int inner;             /* what the re-entering drain returned */
	uint64_t wrapped;      /* records that crossed the data's end */
	const uint8_t *data;
	size_t size;
};

static int see(const struct perfring_sample *s, void *ctx)
{
	struct seen *w = ctx;
	const uint8_t *p = s->raw;
	uint32_t i;

	w->n++;
	w->bytes += s->raw_size;
	w->time_sum += s->time;
	w->last_len = s->raw_size;
	if (s->cpu != -1 || s->pid || s->tid || !s->event || s->record)
		w->bad++;
	if (w->check_seq) {
		for (i = 0; i < s->raw_size; i++)
			if (p[i] != (uint8_t)(w->next_seq + i)) {
				w->bad++;
				break;
			}
		w->next_seq++;
	}
	if (w->data && (size_t)(p - w->data) + s->raw_size > w->size)
		w->wrapped++;
	if (w->rb) {
		bool more, stopped;

		w->inner = pr_rbuf_drain(w->rb, 0, &more, &stopped);
	}
	return w->stop_at && w->n == w->stop_at;
}

static void watch(struct fake *f, struct seen *w)
{
	memset(w, 0, sizeof(*w));
	f->ev.fn = see;
	f->ev.ctx = w;
}

TestSuite(crafted, .timeout = 60);

Test(crafted, records_arrive_whole_and_in_order_across_the_end)
{
	struct fake f;
	struct seen w;
	uint64_t want = 0, i;
	bool more, stopped;
	int n;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.check_seq = true;
	w.data = f.data;
	w.size = f.size;
	/* Lengths 1..251 in turn: every alignment of the end is crossed. */
	for (i = 0; i < 100000; i++) {
		put(&f, (uint32_t)(1 + i % 251), (uint8_t)i);
		want++;
		if (f.prod_pos - f.rb.map.cons_pos > f.size - 300 || i % 7 == 0) {
			n = pr_rbuf_drain(&f.rb, 0, &more, &stopped);
			cr_assert_geq(n, 1, "drain %d at record %llu", n, (unsigned long long)i);
			cr_assert(!more && !stopped);
			cr_assert_eq(cons_page(&f), f.prod_pos, "the consumer page is committed");
		}
	}
	cr_assert_geq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 0);
	cr_assert_eq(w.n, want);
	cr_assert_eq(w.bad, 0, "%llu records with a wrong byte", (unsigned long long)w.bad);
	cr_assert_gt(w.wrapped, 3000, "only %llu records crossed the end",
		     (unsigned long long)w.wrapped);
	cr_assert_eq(f.rb.st.records, want);
	cr_assert_eq(f.rb.st.bytes, w.bytes);
	fake_close(&f);
}

Test(crafted, busy_ends_the_drain_and_the_next_continues)
{
	struct fake f;
	struct seen w;
	uint64_t busy;
	bool more, stopped;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.check_seq = true;
	put(&f, 16, 0);
	busy = reserve(&f, 16, 1);
	put(&f, 16, 2);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 1);
	cr_assert(!more, "a BUSY record is no record left");
	cr_assert_eq(cons_page(&f), busy, "committed up to the BUSY record");
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 0);
	commit(&f, busy, 0);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 2);
	cr_assert_eq(w.n, 3);
	cr_assert_eq(w.bad, 0);
	cr_assert_eq(f.rb.st.wakeups, 2, "drains that found records");
	fake_close(&f);
}

Test(crafted, discarded_records_are_skipped_and_counted)
{
	struct fake f;
	struct seen w;
	uint64_t at;
	bool more, stopped;
	int i;

	fake_open(&f, 4096);
	watch(&f, &w);
	for (i = 0; i < 100; i++) {
		at = reserve(&f, 24, (uint8_t)i);
		commit(&f, at, i % 2 ? PR_RB_DISCARD : 0);
	}
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 50);
	cr_assert_eq(w.n, 50);
	cr_assert_eq(f.rb.st.discarded, 50);
	cr_assert_eq(f.rb.st.records, 50);
	cr_assert_eq(cons_page(&f), f.prod_pos, "discards are consumed too");
	/* A discard last, before a BUSY one: skipped, and the drain stops at BUSY. */
	at = reserve(&f, 8, 0);
	commit(&f, at, PR_RB_DISCARD);
	reserve(&f, 8, 0);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 0);
	cr_assert_eq(f.rb.st.discarded, 51);
	cr_assert_eq(cons_page(&f), at + 16);
	fake_close(&f);
}

Test(crafted, a_budget_of_7_on_1000_records_takes_143_calls)
{
	struct fake f;
	struct seen w;
	bool more = true, stopped;
	int calls = 0, n, total = 0, i;

	fake_open(&f, 32768);
	watch(&f, &w);
	for (i = 0; i < 1000; i++)
		put(&f, 16, (uint8_t)i);
	while (more) {
		n = pr_rbuf_drain(&f.rb, 7, &more, &stopped);
		calls++;
		total += n;
		cr_assert_eq(n, calls < 143 ? 7 : 6, "call %d delivered %d", calls, n);
		cr_assert_eq(more, calls < 143, "call %d: more %d with %d delivered", calls, more,
			     total);
		cr_assert(calls <= 143);
	}
	cr_assert_eq(calls, 143);
	cr_assert_eq(total, 1000);
	cr_assert_eq(f.rb.st.wakeups, 143);
	/* Exactly a budget's worth left: more is false once they are taken. */
	for (i = 0; i < 7; i++)
		put(&f, 16, 0);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 7, &more, &stopped), 7);
	cr_assert(!more);
	fake_close(&f);
}

Test(crafted, a_callback_that_stops_leaves_the_rest_for_the_next_drain)
{
	struct fake f;
	struct seen w;
	bool more, stopped;
	int i;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.check_seq = true;
	for (i = 0; i < 10; i++)
		put(&f, 32, (uint8_t)i);
	w.stop_at = 3;
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 3);
	cr_assert(stopped && more);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 7);
	cr_assert(!stopped && !more);
	cr_assert_eq(w.n, 10);
	cr_assert_eq(w.bad, 0);
	fake_close(&f);
}

Test(crafted, a_drain_inside_a_callback_is_ebusy)
{
	struct fake f;
	struct seen w;
	bool more, stopped;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.rb = &f.rb;
	put(&f, 8, 0);
	put(&f, 8, 0);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 2);
	cr_assert_eq(w.inner, -EBUSY);
	cr_assert_eq(w.n, 2, "each record once");
	w.rb = NULL;
	cr_assert(pr_rbuf_claim(&f.rb));
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), -EBUSY);
	pr_rbuf_unclaim(&f.rb);
	fake_close(&f);
}

Test(crafted, timed_records_carry_their_time_and_short_ones_are_untimed)
{
	struct fake f;
	struct seen w;
	uint64_t at, t = 123456789, got;
	bool more, stopped;

	fake_open(&f, 4096);
	watch(&f, &w);
	f.rb.timed = true;
	f.rb.time_offset = 16;
	at = reserve(&f, 24, 0);
	memcpy(f.data + (at & 4095) + 8 + 16, &t, 8);
	commit(&f, at, 0);
	put(&f, 23, 0); /* one byte short of the time */
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, &more, &stopped), 2);
	cr_assert_eq(w.time_sum, t);
	cr_assert_eq(f.rb.st.untimed, 1);
	/* The merge's face: peek (time), deliver, end. */
	at = reserve(&f, 24, 0);
	t = 42;
	memcpy(f.data + (at & 4095) + 8 + 16, &t, 8);
	commit(&f, at, 0);
	cr_assert(pr_rbuf_claim(&f.rb));
	cr_assert(pr_rbuf_peek(&f.rb, &got));
	cr_assert_eq(got, 42);
	cr_assert(pr_rbuf_peek(&f.rb, &got), "peek again: the same record");
	cr_assert_eq(pr_rbuf_deliver(&f.rb), 1);
	cr_assert(!pr_rbuf_peek(&f.rb, &got));
	cr_assert_eq(pr_rbuf_deliver(&f.rb), 0, "nothing peeked");
	cr_assert(!pr_rbuf_end(&f.rb));
	pr_rbuf_unclaim(&f.rb);
	cr_assert_eq(cons_page(&f), f.prod_pos);
	cr_assert_eq(w.n, 3);
	cr_assert_eq(w.time_sum, 123456789 + 42);
	cr_assert_eq(f.rb.st.wakeups, 2);
	fake_close(&f);
}

Test(crafted, the_merge_face_stops_when_the_callback_asks)
{
	struct fake f;
	struct seen w;
	uint64_t t;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.stop_at = 1;
	put(&f, 8, 0);
	put(&f, 8, 0);
	cr_assert(pr_rbuf_peek(&f.rb, &t));
	cr_assert_eq(t, 0, "untimed");
	cr_assert_lt(pr_rbuf_deliver(&f.rb), 0);
	cr_assert_eq(f.rb.st.records, 1, "a stopping record is delivered and counted");
	cr_assert(pr_rbuf_end(&f.rb), "the second record is there");
	fake_close(&f);
}

Test(crafted, recheck_finds_a_record_committed_after_the_last_next)
{
	struct fake f;
	const void *rec;
	uint32_t len;
	uint64_t disc = 0, at;

	fake_open(&f, 4096);
	cr_assert_eq(pr_rb_next(&f.rb.map, &rec, &len, &disc), 0);
	pr_rb_commit(&f.rb.map);
	cr_assert(!pr_rb_recheck(&f.rb.map), "empty");
	/* Reserved before the next(), committed between it and the end. */
	at = reserve(&f, 16, 0);
	cr_assert_eq(pr_rb_next(&f.rb.map, &rec, &len, &disc), 0, "BUSY");
	pr_rb_commit(&f.rb.map);
	cr_assert(!pr_rb_recheck(&f.rb.map), "still BUSY");
	commit(&f, at, 0);
	cr_assert(pr_rb_recheck(&f.rb.map), "committed since");
	cr_assert_eq(pr_rb_next(&f.rb.map, &rec, &len, &disc), 1);
	cr_assert_eq(len, 16);
	pr_rb_consume(&f.rb.map);
	pr_rb_commit(&f.rb.map);
	cr_assert(!pr_rb_recheck(&f.rb.map));
	/* Reserved and committed after the next() that found the ring empty. */
	cr_assert_eq(pr_rb_next(&f.rb.map, &rec, &len, &disc), 0);
	put(&f, 8, 0);
	pr_rb_commit(&f.rb.map);
	cr_assert(pr_rb_recheck(&f.rb.map), "arrived since");
	/* A discard since is there too: next() skips it. */
	pr_rb_next(&f.rb.map, &rec, &len, &disc);
	pr_rb_consume(&f.rb.map);
	pr_rb_commit(&f.rb.map);
	at = reserve(&f, 8, 0);
	commit(&f, at, PR_RB_DISCARD);
	cr_assert(pr_rb_recheck(&f.rb.map));
	cr_assert_eq(pr_rb_next(&f.rb.map, &rec, &len, &disc), 0);
	cr_assert_eq(disc, 1);
	fake_close(&f);
}

/* One corrupt ring: the good records before it, then -EIO, which stays. */
static void expect_eio(struct fake *f, uint64_t good, const char *what)
{
	struct seen w;
	bool more, stopped;
	int n;

	watch(f, &w);
	n = pr_rbuf_drain(&f->rb, 0, &more, &stopped);
	cr_assert_eq(n, -EIO, "%s: drain %d", what, n);
	cr_assert_eq(w.n, good, "%s: %llu delivered before it", what, (unsigned long long)w.n);
	cr_assert(strstr(f->err.msg, "corrupt"), "%s: sentence \"%s\"", what, f->err.msg);
	cr_assert_eq(pr_rbuf_drain(&f->rb, 0, &more, &stopped), -EIO, "%s: sticky", what);
	cr_assert_eq(w.n, good);
	fake_close(f);
}

/* A header with this length word at the producer's position, distance dist. */
static void bad_header(struct fake *f, uint32_t word, uint64_t dist)
{
	uint64_t off = f->prod_pos & (f->size - 1);

	memcpy(f->data + off, &word, 4);
	f->prod_pos += dist;
	set_prod(f, f->prod_pos);
}

Test(crafted, every_corrupt_header_is_eio_and_nothing_is_read_outside)
{
	struct fake f;
	uint64_t i;

	fake_open(&f, 4096);
	put(&f, 8, 0);
	bad_header(&f, 64, 32); /* longer than the distance */
	expect_eio(&f, 1, "len > distance");

	fake_open(&f, 4096);
	bad_header(&f, 5000, 4096); /* longer than the data */
	expect_eio(&f, 0, "len > size");

	fake_open(&f, 4096);
	bad_header(&f, 0x3fffffff, 4096); /* the largest length the bits allow */
	expect_eio(&f, 0, "len 2^30 - 1");

	fake_open(&f, 4096);
	bad_header(&f, 4089, 4096); /* 4089 + 8 rounds to 4104 */
	expect_eio(&f, 0, "len leaving no room for the header");

	fake_open(&f, 4096);
	bad_header(&f, 17, 24); /* 17 + 8 rounds to 32 > 24 */
	expect_eio(&f, 0, "rounded length beyond the distance");

	fake_open(&f, 4096);
	put(&f, 8, 0);
	put(&f, 8, 0);
	cr_assert_eq(pr_rbuf_drain(&f.rb, 0, NULL, NULL), 2);
	set_prod(&f, 8); /* behind the consumer */
	expect_eio(&f, 0, "producer going backwards");

	fake_open(&f, 4096);
	set_prod(&f, 4096 + 8); /* further ahead than the data holds */
	expect_eio(&f, 0, "producer far ahead");

	fake_open(&f, 4096);
	set_prod(&f, (uint64_t)-8); /* "behind" from the start */
	expect_eio(&f, 0, "producer behind the consumer");

	fake_open(&f, 4096);
	set_prod(&f, 12); /* not a multiple of 8 */
	expect_eio(&f, 0, "misaligned producer");

	/* Every length at every offset near the end, the distance the rest of
	 * the ring: the reader either delivers within the mapping or says EIO. */
	for (i = 0; i < 4096; i += 8) {
		struct seen w;
		bool more, stopped;
		uint32_t word = (uint32_t)((i * 2654435761u) % 8192);
		int n;

		fake_open(&f, 4096);
		watch(&f, &w);
		f.prod_pos = f.rb.map.cons_pos = f.rb.map.prod_pos = 4096 - i;
		__atomic_store_n((uint64_t *)f.cons, f.prod_pos, __ATOMIC_RELAXED);
		bad_header(&f, word, 4096 - 8);
		n = pr_rbuf_drain(&f.rb, 1, &more, &stopped);
		cr_assert(n == -EIO || n == 1, "offset %llu len %u: %d", (unsigned long long)i, word,
			  n);
		cr_assert_eq(n == 1, (((uint64_t)word + 15) & ~7ull) <= 4096 - 8);
		fake_close(&f);
	}
}

Test(crafted, a_corrupt_ring_ends_the_merge_face)
{
	struct fake f;
	uint64_t t;

	fake_open(&f, 4096);
	bad_header(&f, 64, 16);
	cr_assert(!pr_rbuf_peek(&f.rb, &t));
	cr_assert_eq(f.rb.err, -EIO);
	cr_assert(!pr_rbuf_end(&f.rb), "no pass again over a corrupt ring");
	fake_close(&f);
}

Test(crafted, init_refuses_sizes_that_are_not_powers_of_two)
{
	struct pr_rb_map m;
	uint64_t page[512] = { 0 };

	cr_assert_eq(pr_rb_init(&m, (uint8_t *)page, (const uint8_t *)page, 3000, 4096), -EINVAL);
	cr_assert_eq(pr_rb_init(&m, (uint8_t *)page, (const uint8_t *)page, 0, 4096), -EINVAL);
	cr_assert_eq(pr_rb_map(&m, -1, 3000), -EINVAL);
	cr_assert_eq(pr_rb_map(&m, -1, 2048), -EINVAL, "less than a page");
	cr_assert_eq(pr_rb_map(&m, -1, 4096), -EBADF);
	pr_rb_unmap(&m);
	pr_rb_unmap(&m);
}

/* The kernel's producer, as kernel/bpf/ringbuf.c commits: the header's
 * exchange (a full barrier), then a wakeup only when the consumer position
 * it loads is this record's. Each record stays BUSY for a while first, so
 * the reader often ends a drain at it. */
/* The peek at the reader's own position races by design; under TSan the
 * producer only waits a while. */
#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifndef TSAN
#define TSAN 0
#endif

struct producer {
	struct fake *f;
	int efd;
	uint64_t n, wakeups;
	int stop;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t i, at, one = 1;
	uint32_t *h, len;
	volatile unsigned spin;

	for (i = 0; i < p->n; i++) {
		while (p->f->prod_pos + 32 - cons_page(p->f) > p->f->size - 8)
			if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
				return NULL; /* full: the kernel would fail the reserve */
		at = reserve(p->f, 16, (uint8_t)i);
		/* Every other record: commit just as the reader reaches it, which
		 * is when its drain is about to end (test-only peek at its
		 * position); else after a while. */
		if (i % 2 && !TSAN)
			for (spin = 0; spin < 100000 &&
				       __atomic_load_n(&p->f->rb.map.cons_pos, __ATOMIC_RELAXED) != at;
			     spin++)
				;
		else
			for (spin = 0; spin < (unsigned)(i * 7919 % 300); spin++)
				;
		h = (uint32_t *)(p->f->data + (at & (p->f->size - 1)));
		len = 16;
		__atomic_exchange_n(h, len, __ATOMIC_SEQ_CST);
		if (cons_page(p->f) == at) {
			p->wakeups++;
			if (write(p->efd, &one, sizeof(one)) != sizeof(one))
				break;
		}
	}
	return NULL;
}

Test(crafted, an_edge_triggered_reader_misses_no_commit)
{
	struct fake f;
	struct seen w;
	struct producer p = { .n = 200000 };
	struct pollfd pfd;
	pthread_t t;
	uint64_t v;
	int idle = 0;

	fake_open(&f, 4096);
	watch(&f, &w);
	w.check_seq = true;
	p.f = &f;
	p.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	cr_assert_geq(p.efd, 0);
	pfd.fd = p.efd;
	pfd.events = POLLIN;
	cr_assert_eq(pthread_create(&t, NULL, produce, &p), 0);
	/* Only the producer's wakeups start a drain: 200 ms without one while
	 * records are missing means one was left with no wakeup. */
	while (w.n < p.n && idle < 2) {
		if (poll(&pfd, 1, 100) == 1) {
			cr_assert_eq(read(p.efd, &v, sizeof(v)), sizeof(v));
			cr_assert_geq(pr_rbuf_drain(&f.rb, 0, NULL, NULL), 0);
			idle = 0;
		} else {
			idle++;
		}
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	cr_assert_eq(w.n, p.n, "%llu of %llu records before the wakeups stopped (%llu wakeups)",
		     (unsigned long long)w.n, (unsigned long long)p.n,
		     (unsigned long long)p.wakeups);
	cr_assert_eq(w.bad, 0);
	close(p.efd);
	fake_close(&f);
}
