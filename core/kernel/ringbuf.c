/* SPDX-License-Identifier: MIT */
/* A BPF ring buffer's mapping and the consumer's side of its protocol. */
#include "kernel/ringbuf.h"
#include "base/sys.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int pr_rb_init(struct pr_rb_map *m, uint8_t *cons, const uint8_t *prod, uint64_t size,
	       size_t page)
{
	if (size < 8 || (size & (size - 1)) || !page)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->cons = cons;
	m->prod = prod;
	m->data = prod + page;
	m->size = size;
	m->mask = size - 1;
	m->page = page;
	m->cons_pos = __atomic_load_n((const uint64_t *)cons, __ATOMIC_ACQUIRE);
	m->prod_pos = m->cons_pos;
	return 0;
}

int pr_rb_map(struct pr_rb_map *m, int map_fd, uint64_t max_entries)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t page = psz > 0 ? (size_t)psz : 4096, ro_len;
	void *cons, *ro;
	int err;

	memset(m, 0, sizeof(*m));
	if (!max_entries || (max_entries & (max_entries - 1)) || max_entries % page ||
	    max_entries > (SIZE_MAX / 4 - page))
		return -EINVAL;
	ro_len = 2 * page + 2 * (size_t)max_entries;
	cons = pr_mmap(page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd);
	if (cons == MAP_FAILED)
		return -errno;
	ro = pr_mmap(ro_len, PROT_READ, MAP_SHARED, map_fd);
	if (ro == MAP_FAILED) {
		err = errno;
		munmap(cons, page);
		errno = err;
		return -err;
	}
	pr_rb_init(m, cons, (const uint8_t *)ro + page, max_entries, page);
	m->ro = ro;
	m->ro_len = ro_len;
	return 0;
}

void pr_rb_unmap(struct pr_rb_map *m)
{
	if (m->ro) {
		munmap(m->ro, m->ro_len);
		munmap(m->cons, m->page);
	}
	m->ro = NULL;
	m->cons = NULL;
	m->prod = m->data = NULL;
}

static inline uint64_t prod_load(const struct pr_rb_map *m)
{
	return __atomic_load_n((const uint64_t *)m->prod, __ATOMIC_ACQUIRE);
}

/* The header at cons_pos; its record's data is visible once this is read. */
static inline uint32_t hdr_load(const struct pr_rb_map *m)
{
	return __atomic_load_n((const uint32_t *)(m->data + (m->cons_pos & m->mask)),
			       __ATOMIC_ACQUIRE);
}

int pr_rb_next(struct pr_rb_map *m, const void **rec, uint32_t *len, uint64_t *discarded)
{
	uint64_t dist, total;
	uint32_t hdr;

	m->next_len = 0;
	for (;;) {
		/* The producer's line is read only when what we knew is used up:
		 * each read of it competes with the writers. */
		if (m->prod_pos == m->cons_pos)
			m->prod_pos = prod_load(m);
		dist = m->prod_pos - m->cons_pos;
		/* The kernel keeps the distance below the size and every position
		 * 8-byte aligned; behind us (a huge distance) is corrupt too. */
		if (__builtin_expect(dist > m->size || (m->cons_pos & 7) || (dist & 7), 0))
			return -EIO;
		if (!dist)
			return 0;
		hdr = hdr_load(m);
		if (hdr & PR_RB_BUSY)
			return 0;
		total = ((uint64_t)(hdr & ~(PR_RB_BUSY | PR_RB_DISCARD)) + PR_RB_HDR + 7) & ~7ull;
		/* Bounded by the distance, so by the size: the record ends before
		 * the second copy of the data does. */
		if (__builtin_expect(total > dist, 0))
			return -EIO;
		if (hdr & PR_RB_DISCARD) {
			m->cons_pos += total;
			++*discarded;
			continue;
		}
		*rec = m->data + (m->cons_pos & m->mask) + PR_RB_HDR;
		*len = hdr & ~(PR_RB_BUSY | PR_RB_DISCARD);
		m->next_len = total;
		return 1;
	}
}

void pr_rb_consume(struct pr_rb_map *m)
{
	m->cons_pos += m->next_len;
	m->next_len = 0;
}

void pr_rb_commit(struct pr_rb_map *m)
{
	__atomic_store_n((uint64_t *)m->cons, m->cons_pos, __ATOMIC_RELEASE);
}

bool pr_rb_recheck(struct pr_rb_map *m)
{
	uint64_t dist;

	/* Our consumer position against the kernel's header xchg and its load
	 * of that position (Dekker's pattern): one of the two sees the other.
	 * The full barrier is a sequentially consistent exchange of the
	 * position just committed (x86 xchg, arm64 ldaxr/stlxr), followed by
	 * sequentially consistent loads: a fence would do too, but gcc's TSan
	 * refuses __atomic_thread_fence, and TSan does model the exchange. */
	(void)__atomic_exchange_n((uint64_t *)m->cons, m->cons_pos, __ATOMIC_SEQ_CST);
	m->prod_pos = __atomic_load_n((const uint64_t *)m->prod, __ATOMIC_SEQ_CST);
	dist = m->prod_pos - m->cons_pos;
	if (!dist)
		return false;
	/* A position that cannot be right: next() says so. */
	if (dist > m->size || ((m->cons_pos | dist) & 7))
		return true;
	return !(__atomic_load_n((const uint32_t *)(m->data + (m->cons_pos & m->mask)),
				 __ATOMIC_SEQ_CST) & PR_RB_BUSY);
}
