/* SPDX-License-Identifier: MIT */
/* The values of one tracepoint field (--by EVENT:FIELD): read as text and
 * counted per distinct value up to a cap, the rest as "other". One
 * implementation for perfring-watch's table and perfring-exporter's page. */
#ifndef PERFRING_FIELDCOUNT_H
#define PERFRING_FIELDCOUNT_H

#include <perfring/perfring.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FC_KEY_MAX 256          /* longer values are counted by their first bytes */
#define FC_NAME_MAX 256
#define FC_DEFAULT_MAX_SERIES 1000
#define FC_NUM_MAX 24           /* a formatted 64-bit integer and its NUL */

struct fc_entry {
	uint64_t total, interval;
	uint16_t len;
	char key[FC_KEY_MAX];
};

struct fieldcount {
	char event[FC_NAME_MAX];        /* "system:name" */
	char field[FC_NAME_MAX];
	const struct perfring_event *ev;/* NULL until bound */
	struct perfring_field f;
	bool numeric;                   /* an integer field: values are decimal */
	size_t max, n;                  /* the cap, distinct values counted */
	struct fc_entry *e;
	uint32_t *slot;                 /* hash of entries, index + 1; 0 = free */
	size_t nslot;
	uint64_t total, interval, other_total, other_interval, unreadable;
};

/* "SYSTEM:NAME:FIELD". 0, or -EINVAL with nothing kept. */
int fc_parse(struct fieldcount *fc, const char *spec);

/* Finds the field in ev and allocates room for max distinct values:
 * 0, -ENOENT (no such field), -EINVAL (not a tracepoint), -ENOMEM. */
int fc_bind(struct fieldcount *fc, const struct perfring_event *ev, size_t max);
void fc_free(struct fieldcount *fc);

void fc_count(struct fieldcount *fc, const struct perfring_sample *s);
void fc_interval_reset(struct fieldcount *fc);

/* Up to n entry indices, the largest count first (this interval's or the
 * whole run's); entries with a zero count are left out. */
size_t fc_top(const struct fieldcount *fc, bool interval, size_t *idx, size_t n);

/* Whether the field's C type is a pointer ("const char *"): its value is an
 * address in the traced process, never what it points to. */
bool fc_is_pointer(const struct perfring_field *f);

/* A field's value as text: strings point into the payload (not
 * NUL-terminated, not escaped); integers are formatted into num
 * (FC_NUM_MAX bytes), pointers as 0x-prefixed hex; other arrays as hex
 * bytes into num, cut to fit.
 * 0, or the accessor's -errno for a value outside the payload. */
int fc_value(const struct perfring_field *f, const struct perfring_sample *s, char *num,
	     const char **out, size_t *len);

#endif
