/* SPDX-License-Identifier: MIT */
/* One BPF_MAP_TYPE_RINGBUF's mapping and its protocol (layer 1: base only,
 * fuzzable alone). The kernel's side is kernel/bpf/ringbuf.c: the producer
 * position moves at reserve, each record's header says when it is committed
 * (BUSY clear) or thrown away (DISCARD), and the consumer position is ours. */
#ifndef PR_KERNEL_RINGBUF_H
#define PR_KERNEL_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_RB_BUSY (1u << 31)    /* reserved, not yet submitted or discarded */
#define PR_RB_DISCARD (1u << 30) /* discarded: skipped */
#define PR_RB_HDR 8u             /* u32 len (with the two bits), u32 pg_off */

struct pr_rb_map {
	uint8_t *cons;          /* consumer page (offset 0), read-write, one page */
	const uint8_t *prod;    /* producer page + the data mapped twice, read-only */
	const uint8_t *data;    /* prod + page size */
	uint64_t size, mask;    /* data size (max_entries, a power of two), size - 1 */
	size_t page;
	uint64_t cons_pos;      /* the reader's position (stored at commit) */
	uint64_t prod_pos;      /* the producer position last read (acquire) */
	uint64_t next_len;      /* bytes (header + data, rounded to 8) of the record
	                           next() returned; 0 when none */
	void *ro;               /* the read-only mapping prod lies in (NULL: the
	                           caller's memory, pr_rb_init) */
	size_t ro_len;
};

/* Maps map_fd's ring of max_entries bytes (through base/sys's hooks, so fault
 * injection reaches each call). 0 or -errno (errno kept): -EINVAL when
 * max_entries is not a power of two multiple of the page size (or too large to
 * map). The consumer page is mapped read-write alone; the read-only mapping
 * starts at offset 0 too (consumer, producer, data twice: pr_mmap takes no
 * offset, and the kernel allows any read-only range), prod one page into it.
 * The consumer position starts at the one the consumer page holds. */
int pr_rb_map(struct pr_rb_map *m, int map_fd, uint64_t max_entries);
void pr_rb_unmap(struct pr_rb_map *m);   /* idempotent */

/* Points m at memory the caller mapped: cons one page (read-write), prod a
 * page followed by the size bytes of data mapped twice in a row (tests and
 * the fuzz target build rings this way). size a power of two >= 8. */
int pr_rb_init(struct pr_rb_map *m, uint8_t *cons, const uint8_t *prod, uint64_t size,
	       size_t page);

/* The next committed record at cons_pos: 1 with *rec and *len (exact length,
 * contiguous thanks to the double mapping), 0 when there is none (empty, or
 * BUSY: the drain ends there), -EIO for a header that cannot be right (its
 * record, header included and rounded to 8, beyond the producer-consumer
 * distance or the data size; a producer position behind the consumer's or more
 * than the data size ahead of it): nothing is read outside the mapping, and the
 * caller reports it. DISCARD records are skipped (moving cons_pos) and added to
 * *discarded. Calling it again without consume returns the same record. */
int pr_rb_next(struct pr_rb_map *m, const void **rec, uint32_t *len, uint64_t *discarded);
/* cons_pos past the record next() returned (nothing when it returned none). */
void pr_rb_consume(struct pr_rb_map *m);
/* Release-store of cons_pos to the consumer page: the kernel may reuse the
 * space from here. */
void pr_rb_commit(struct pr_rb_map *m);
/* Full barrier (a seq_cst exchange of the committed position, which also
 * commits it), then the producer position and the header at cons_pos again:
 * true when a record that next() would return (or skip) is there. The reader
 * calls it after commit when next() found none (empty or BUSY): the kernel
 * wakes the reader only when it commits the record at the consumer position it
 * sees, so without this a record committed between the last next() and the
 * commit would wait for a wakeup that never comes (edge-triggered drivers). */
bool pr_rb_recheck(struct pr_rb_map *m);

#endif
