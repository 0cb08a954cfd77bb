/* SPDX-License-Identifier: MIT */
/* A ring's drops: LOST records and the kernel's per-event totals, as two
 * counts of one sequence, so that no drop is counted twice. */
#include "rings/lost.h"
#include "base/sys.h"

#include <errno.h>
#include <stdio.h>
#include <sys/utsname.h>

/* 0 not known yet, else 1 + whether the kernel has PERF_FORMAT_LOST. The
 * kernel refuses unknown read_format bits, so an older one must not get it. */
static int lost_known;

static bool kernel_has_lost(void)
{
	struct utsname u;
	int major = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d", &major) == 1 && major >= 6;
}

uint64_t pr_lost_read_format(void)
{
	int k = __atomic_load_n(&lost_known, __ATOMIC_RELAXED);

	if (!k) {
		k = 1 + kernel_has_lost();
		__atomic_store_n(&lost_known, k, __ATOMIC_RELAXED);
	}
	return k == 2 ? PERF_FORMAT_ID | PERF_FORMAT_LOST : 0;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Every growth of stats.lost goes through here, and to the lost callback
 * (perfring_session_set_lost_callback): the increases it is told add up to
 * stats.lost. */
static void add_lost(struct pr_cpu *c, uint64_t n)
{
	const struct pr_lost_cb *cb;
	pr_lost_fn fn;

	if (!n)
		return;
	PR_STAT_ADD(c, lost, n);
	if (!c->sink)
		return;
	cb = pr_sink_lost(c->sink);
	if ((fn = __atomic_load_n(&cb->fn, __ATOMIC_RELAXED)))
		fn(c->cpu, n, cb->ctx);
}

/*
 * Both counts follow one sequence, the ring's drops in order: the LOST
 * records' sum is the drops before the last one written, a read total is
 * every drop until the read. So stats.lost is the larger of the two, and each
 * new value adds only what it covers beyond the larger one before it.
 */
static void cover(struct pr_cpu *c, uint64_t rec, uint64_t read)
{
	uint64_t before = max64(c->lost.rec, c->lost.read);

	c->lost.rec = rec;
	c->lost.read = read;
	add_lost(c, max64(rec, read) - before);
}

void pr_lost_record(struct pr_cpu *c, uint64_t n)
{
	uint64_t rec = c->lost.rec + n;

	/* A hostile ring's count must not wrap the sum back. */
	cover(c, rec < n ? UINT64_MAX : rec, c->lost.read);
}

void pr_lost_samples(struct pr_cpu *c, uint64_t n)
{
	add_lost(c, n);
}

void pr_lost_due(struct pr_cpu *cpu, size_t n)
{
	size_t i;

	for (i = 0; cpu && i < n; i++)
		__atomic_store_n(&cpu[i].lost.due, 1, __ATOMIC_RELEASE);
}

/* The largest group a PERF_SAMPLE_READ event's read may return. */
#define READ_WORDS (3 + 3 * 256)

/* The fd's own drops in a read of n u64s. Every read_format has ID and LOST
 * (event.c): { value, [times], id, lost } of 3 to 5 u64s, or a group's
 * { nr, [times], { value, id, lost }[nr] }, its own counter first. Below 7
 * u64s, either way its lost is the last; from 7 on it is a group of 2 or
 * more, 1 + times + 3 * nr u64s with times < 3, which n alone gives. */
static uint64_t own_lost(const uint64_t *v, size_t n)
{
	if (n < 7)
		return v[n - 1];
	return v[1 + (n - 1) % 3 + 2];
}

/* read() with the fd's read_format (linux/perf_event.h). */
static int add_fd_lost(int fd, uint64_t *sum)
{
	uint64_t v[READ_WORDS];
	ssize_t r = pr_read(fd, v, sizeof(v));

	if (r < 0)
		return -errno;
	if (r < 3 * (ssize_t)sizeof(*v) || r % sizeof(*v))
		return -EIO;
	*sum += own_lost(v, (size_t)r / sizeof(*v));
	return 0;
}

int pr_lost_sync(struct pr_cpu *c)
{
	uint64_t sum = 0;
	size_t i;
	int err;

	if (!__atomic_exchange_n(&c->lost.due, 0, __ATOMIC_ACQUIRE))
		return 0;
	/* An offline CPU has no events, a synthetic ring (on, but read from
	 * memory) no fds, an older kernel no totals. */
	if (!pr_cpu_on(c) || c->leader_fd < 0 || !pr_lost_read_format())
		return 0;
	/* Each event counts the drops of its own records (its inherited
	 * children's too), the dummy leader those of the tracking records. */
	err = add_fd_lost(c->leader_fd, &sum);
	for (i = 0; !err && i < c->nfds; i++)
		err = add_fd_lost(c->fds[i], &sum);
	if (err) {
		__atomic_store_n(&c->lost.due, 1, __ATOMIC_RELAXED);
		return err;
	}
	cover(c, c->lost.rec, max64(sum, c->lost.read));
	return 0;
}
