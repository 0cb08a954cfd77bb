/* SPDX-License-Identifier: MIT */
/* A backward (overwrite) ring's bytes: its complete records, found by
 * walking from the head, and their copy oldest first. */
#ifndef PR_KERNEL_BACKWARD_H
#define PR_KERNEL_BACKWARD_H

#include <stdint.h>

/* Why a walk ended. */
enum pr_bwd_end {
	PR_BWD_ALL = 0, /* at `since`: every record written since is in the range */
	PR_BWD_TORN,    /* the next record reaches past `room`: overwritten in part */
	PR_BWD_BAD,     /* a header no kernel writes: size under 8 (0 is unwritten
	                   memory), not a multiple of 8, a head not 8-aligned, or a
	                   record crossing `since` */
};

struct pr_bwd_range {
	uint64_t len;           /* bytes [head, head + len) hold whole records */
	uint64_t nrec;          /* how many */
	enum pr_bwd_end end;
};

/*
 * A backward ring keeps its newest record at head and each older one right
 * after the one before (in address order, modulo size), so only a walk from
 * the head finds where the oldest whole record ends (perf's
 * overwrite_rb_find_range). data holds size bytes (a power of two >= 8).
 * since: bytes written after the last read, whose records are wanted (the
 * walk stops there); room: bytes from head that still hold what was written
 * (size, or less when the kernel has written over the far end since). Reads
 * only 8-aligned headers below size, and at most size / 8 of them.
 */
void pr_bwd_find(const uint8_t *data, uint64_t size, uint64_t head, uint64_t since,
		 uint64_t room, struct pr_bwd_range *r);

/* Copies the records of r (from pr_bwd_find on the same, unchanged bytes)
 * into out, r->len bytes, oldest first: a forward stream of them. */
void pr_bwd_reverse(const uint8_t *data, uint64_t size, uint64_t head,
		    const struct pr_bwd_range *r, uint8_t *out);

/* Copies n <= size bytes from head on, across the ring's end, into out. */
void pr_bwd_copy_out(const uint8_t *data, uint64_t size, uint64_t head, uint64_t n,
		     uint8_t *out);

#endif
