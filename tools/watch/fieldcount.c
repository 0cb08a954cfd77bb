/* SPDX-License-Identifier: MIT */
/* The values of one tracepoint field, counted per value up to a cap (see
 * fieldcount.h). Open addressing over a table twice the cap, never deleted
 * from: a value keeps its row for the whole run. */
#include "config.h"
#include "fieldcount.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fc_parse(struct fieldcount *fc, const char *spec)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	memset(fc, 0, sizeof(*fc));
	if (!c1 || !c2 || c1 == spec || c2 == c1 + 1 || !c2[1] || strchr(c2 + 1, ':'))
		return -EINVAL;
	if ((size_t)(c2 - spec) >= sizeof(fc->event) || strlen(c2 + 1) >= sizeof(fc->field))
		return -EINVAL;
	memcpy(fc->event, spec, (size_t)(c2 - spec));
	snprintf(fc->field, sizeof(fc->field), "%s", c2 + 1);
	return 0;
}

int fc_bind(struct fieldcount *fc, const struct perfring_event *ev, size_t max)
{
	int err = perfring_event_field(ev, fc->field, &fc->f);

	if (err)
		return err;
	fc->numeric = !(fc->f.flags & (PERFRING_FIELD_STRING | PERFRING_FIELD_ARRAY |
				       PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC));
	fc->max = max;
	for (fc->nslot = 16; fc->nslot < 2 * max; fc->nslot *= 2)
		;
	fc->e = calloc(max ? max : 1, sizeof(*fc->e));
	fc->slot = calloc(fc->nslot, sizeof(*fc->slot));
	if (!fc->e || !fc->slot) {
		fc_free(fc);
		return -ENOMEM;
	}
	fc->ev = ev;
	return 0;
}

void fc_free(struct fieldcount *fc)
{
	free(fc->e);
	free(fc->slot);
	fc->e = NULL;
	fc->slot = NULL;
	fc->ev = NULL;
}

static void hex_bytes(const unsigned char *p, size_t n, char *num)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 3 <= FC_NUM_MAX; i++)
		o += (size_t)snprintf(num + o, FC_NUM_MAX - o, "%02x", p[i]);
	num[o] = '\0';
}

bool fc_is_pointer(const struct perfring_field *f)
{
	size_t n = f->type ? strlen(f->type) : 0;

	while (n && f->type[n - 1] == ' ')
		n--;
	return n && f->type[n - 1] == '*' &&
	       !(f->flags & (PERFRING_FIELD_ARRAY | PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC));
}

static int int_value(const struct perfring_field *f, const struct perfring_sample *s, char *num)
{
	int64_t v;
	uint64_t u;
	int err;

	if (fc_is_pointer(f)) {
		if (!(err = perfring_field_uint(f, s, &u)))
			snprintf(num, FC_NUM_MAX, "0x%" PRIx64, u);
	} else if (f->flags & PERFRING_FIELD_SIGNED) {
		if (!(err = perfring_field_int(f, s, &v)))
			snprintf(num, FC_NUM_MAX, "%" PRId64, v);
	} else if (!(err = perfring_field_uint(f, s, &u))) {
		snprintf(num, FC_NUM_MAX, "%" PRIu64, u);
	}
	return err;
}

int fc_value(const struct perfring_field *f, const struct perfring_sample *s, char *num,
	     const char **out, size_t *len)
{
	const void *data;
	size_t bytes;
	int err;

	if (f->flags & PERFRING_FIELD_STRING)
		return perfring_field_str(f, s, out, len);
	if (f->flags & (PERFRING_FIELD_ARRAY | PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC)) {
		if ((err = perfring_field_array(f, s, &data, &bytes)))
			return err;
		hex_bytes(data, bytes, num);
	} else if ((err = int_value(f, s, num))) {
		return err;
	}
	*out = num;
	*len = strlen(num);
	return 0;
}

static uint32_t hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

/* The entry for key, made if there is room; NULL once the cap is reached. */
static struct fc_entry *lookup(struct fieldcount *fc, const char *key, size_t len)
{
	size_t mask = fc->nslot - 1, i = hash(key, len) & mask;
	struct fc_entry *e;

	for (; fc->slot[i]; i = (i + 1) & mask) {
		e = &fc->e[fc->slot[i] - 1];
		if (e->len == len && !memcmp(e->key, key, len))
			return e;
	}
	if (fc->n == fc->max)
		return NULL;
	e = &fc->e[fc->n++];
	e->len = (uint16_t)len;
	memcpy(e->key, key, len);
	fc->slot[i] = (uint32_t)fc->n;
	return e;
}

void fc_count(struct fieldcount *fc, const struct perfring_sample *s)
{
	char num[FC_NUM_MAX];
	const char *v;
	size_t len;
	struct fc_entry *e;

	if (fc_value(&fc->f, s, num, &v, &len)) {
		fc->unreadable++;
		return;
	}
	fc->total++;
	fc->interval++;
	e = lookup(fc, v, len < FC_KEY_MAX ? len : FC_KEY_MAX);
	if (!e) {
		fc->other_total++;
		fc->other_interval++;
		return;
	}
	e->total++;
	e->interval++;
}

void fc_interval_reset(struct fieldcount *fc)
{
	for (size_t i = 0; i < fc->n; i++)
		fc->e[i].interval = 0;
	fc->interval = 0;
	fc->other_interval = 0;
}

struct top_ctx {
	const struct fieldcount *fc;
	bool interval;
};

static uint64_t count_of(const struct top_ctx *t, size_t i)
{
	return t->interval ? t->fc->e[i].interval : t->fc->e[i].total;
}

/* Keeps idx[0..k) sorted, largest first, by inserting i where it belongs. */
static size_t insert_top(const struct top_ctx *t, size_t *idx, size_t k, size_t n, size_t i)
{
	uint64_t c = count_of(t, i);
	size_t at = k < n ? k : n - 1;

	if (k == n && count_of(t, idx[n - 1]) >= c)
		return k;
	while (at > 0 && count_of(t, idx[at - 1]) < c) {
		idx[at] = idx[at - 1];
		at--;
	}
	idx[at] = i;
	return k < n ? k + 1 : k;
}

size_t fc_top(const struct fieldcount *fc, bool interval, size_t *idx, size_t n)
{
	struct top_ctx t = { fc, interval };
	size_t k = 0;

	for (size_t i = 0; n && i < fc->n; i++)
		if (count_of(&t, i))
			k = insert_top(&t, idx, k, n, i);
	return k;
}
