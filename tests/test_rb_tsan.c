/* SPDX-License-Identifier: MIT */
/* The BPF ring buffer reader's threads, for TSan (it speaks TAP: Criterion's
 * runner crashes under TSan): a producer thread committing as the kernel does
 * (header exchange, then a wakeup only for the record at the consumer
 * position) while an edge-triggered reader drains and a third thread reads
 * the stats (R8); then two threads draining one ring buffer at once (R1: each
 * record exactly once, the other gets -EBUSY). Over a ring crafted in memory:
 * a memfd with the data mapped twice in a row, as the kernel maps it. */
#include "kernel/ringbuf.h"
#include "read/ringbuf.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE 4096u
#define N 100000u

struct ring {
	uint8_t *base, *cons, *prod, *data;
	size_t page;
	int fd;
	uint64_t prod_pos;          /* the producer's own */
	struct pr_rbuf rb;
	struct perfring_event ev;
	struct pr_registry reg;
	struct pr_errbuf err;
	uint64_t n, bad, next;      /* what the callback saw (under R1) */
	int efd, stop, done;
	uint64_t wakeups;
};

static int ring_open(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->fd = memfd_create("rbtsan", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)(2 * r->page + SIZE)))
		return -1;
	r->base = mmap(NULL, 2 * r->page + 2 * SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED)
		return -1;
	r->cons = r->base;
	r->prod = r->base + r->page;
	r->data = r->prod + r->page;
	if (mmap(r->base, 2 * r->page + SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd,
		 0) == MAP_FAILED ||
	    mmap(r->data + SIZE, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd,
		 (off_t)(2 * r->page)) == MAP_FAILED)
		return -1;
	if (pr_rb_init(&r->rb.map, r->cons, r->prod, SIZE, r->page))
		return -1;
	r->reg.err = &r->err;
	r->ev.reg = &r->reg;
	r->rb.ev = &r->ev;
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return r->efd < 0 ? -1 : 0;
}

static void ring_close(struct ring *r)
{
	munmap(r->base, 2 * r->page + 2 * SIZE);
	close(r->fd);
	close(r->efd);
}

/* Records are 16 bytes: the sequence number twice. */
static int see(const struct perfring_sample *s, void *ctx)
{
	struct ring *r = ctx;
	uint64_t v[2];

	if (s->raw_size != sizeof(v)) {
		r->bad++;
		return 0;
	}
	memcpy(v, s->raw, sizeof(v));
	r->bad += v[0] != r->next || v[1] != r->next;
	r->next++;
	r->n++;
	return 0;
}

static void *produce(void *arg)
{
	struct ring *r = arg;
	uint64_t i, at, one = 1, v[2];
	uint32_t hdr, *h;
	volatile unsigned spin;

	for (i = 0; i < N; i++) {
		while (r->prod_pos + 24 - __atomic_load_n((uint64_t *)r->cons, __ATOMIC_ACQUIRE) >
		       SIZE - 8)
			if (__atomic_load_n(&r->stop, __ATOMIC_RELAXED))
				return NULL;
		at = r->prod_pos;
		h = (uint32_t *)(r->data + (at & (SIZE - 1)));
		__atomic_store_n(h, 16u | PR_RB_BUSY, __ATOMIC_RELAXED);
		v[0] = v[1] = i;
		memcpy(h + 2, v, sizeof(v));
		r->prod_pos += 24;
		__atomic_store_n((uint64_t *)r->prod, r->prod_pos, __ATOMIC_RELEASE);
		for (spin = 0; spin < (unsigned)(i * 7919 % 200); spin++)
			;
		hdr = 16;
		__atomic_exchange_n(h, hdr, __ATOMIC_SEQ_CST);
		if (__atomic_load_n((uint64_t *)r->cons, __ATOMIC_SEQ_CST) == at) {
			r->wakeups++;
			if (write(r->efd, &one, sizeof(one)) != sizeof(one))
				return NULL;
		}
	}
	return NULL;
}

static void *read_stats(void *arg)
{
	struct ring *r = arg;
	struct perfring_ringbuf_stats st, last = { 0, 0, 0, 0, 0 };

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		pr_rbuf_stats_read(&r->rb, &st);
		if (st.records < last.records || st.bytes < last.bytes)
			__atomic_store_n(&r->stop, 2, __ATOMIC_RELAXED); /* counters went back */
		last = st;
	}
	return NULL;
}

static int edge_triggered(void)
{
	struct ring r;
	struct pollfd pfd;
	pthread_t p, s;
	uint64_t v;
	int idle = 0, ok;

	if (ring_open(&r))
		return 0;
	r.ev.fn = see;
	r.ev.ctx = &r;
	pfd.fd = r.efd;
	pfd.events = POLLIN;
	pthread_create(&p, NULL, produce, &r);
	pthread_create(&s, NULL, read_stats, &r);
	while (r.n < N && idle < 3) {
		if (poll(&pfd, 1, 100) == 1) {
			if (read(r.efd, &v, sizeof(v)) != sizeof(v) ||
			    pr_rbuf_drain(&r.rb, 0, NULL, NULL) < 0)
				break;
			idle = 0;
		} else {
			idle++;
		}
	}
	if (__atomic_load_n(&r.stop, __ATOMIC_RELAXED) != 2)
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	pthread_join(p, NULL);
	pthread_join(s, NULL);
	ok = r.n == N && !r.bad && r.rb.st.records == N && r.stop == 1;
	if (!ok)
		printf("# %llu of %u records, %llu bad, stop %d\n", (unsigned long long)r.n, N,
		       (unsigned long long)r.bad, r.stop);
	ring_close(&r);
	return ok;
}

struct drainer {
	struct ring *r;
	uint64_t got, busy;
};

static void *drain_loop(void *arg)
{
	struct drainer *d = arg;
	int n;

	for (;;) {
		n = pr_rbuf_drain(&d->r->rb, 3, NULL, NULL);
		if (n == -EBUSY)
			d->busy++;
		else if (n > 0)
			d->got += (uint64_t)n;
		else if (__atomic_load_n(&d->r->done, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

static int two_drainers(void)
{
	struct ring r;
	struct drainer d[2];
	pthread_t t[2], p;
	uint64_t last = 0;
	int i, ok;

	if (ring_open(&r))
		return 0;
	r.ev.fn = see;
	r.ev.ctx = &r;
	pthread_create(&p, NULL, produce, &r);
	for (i = 0; i < 2; i++) {
		d[i] = (struct drainer){ &r, 0, 0 };
		pthread_create(&t[i], NULL, drain_loop, &d[i]);
	}
	pthread_join(p, NULL);
	/* The producer is done: one more full drain by each finds the rest. */
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	while ((i = pr_rbuf_drain(&r.rb, 0, NULL, NULL)) > 0)
		last += (uint64_t)i;
	ok = r.n == N && !r.bad && d[0].got + d[1].got + last == N;
	if (!ok)
		printf("# %llu of %u records, %llu bad, drained %llu + %llu\n",
		       (unsigned long long)r.n, N, (unsigned long long)r.bad,
		       (unsigned long long)d[0].got, (unsigned long long)d[1].got);
	else
		printf("# -EBUSY %llu and %llu times\n", (unsigned long long)d[0].busy,
		       (unsigned long long)d[1].busy);
	ring_close(&r);
	return ok;
}

int main(void)
{
	printf("1..2\n");
	printf("%sok 1 - an edge-triggered reader, a producer and a stats reader\n",
	       edge_triggered() ? "" : "not ");
	printf("%sok 2 - two threads draining one ring buffer: each record once\n",
	       two_drainers() ? "" : "not ");
	return 0;
}
