/* SPDX-License-Identifier: MIT */
/* Buffered samples and stats as JavaScript values: one array of
 * { event, cpu, pid, tid, time, fields } per batch. Integer fields of 1, 2
 * or 4 bytes are numbers, of 8 bytes BigInts; strings are strings; other
 * arrays are Arrays of those. Keys are made once per batch. */
#include "pn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { K_EVENT, K_CPU, K_PID, K_TID, K_TIME, K_FIELDS, K_N };
static const char *const rec_keys[K_N] = { "event", "cpu", "pid", "tid", "time", "fields" };

/* napi_values of one batch: the keys, each event's name and field names. */
struct batch {
	napi_env env;
	napi_value key[K_N];
	napi_value *ev_name;
	napi_value *field_key;     /* ev_n * max_fields */
	napi_property_descriptor *desc;
};

static napi_value str(napi_env env, const char *s, size_t len)
{
	napi_value v = NULL;

	napi_create_string_utf8(env, s, len, &v);
	return v;
}

static napi_value num(napi_env env, double d)
{
	napi_value v = NULL;

	napi_create_double(env, d, &v);
	return v;
}

/* One integer of `size` bytes at p (unaligned), as a number or BigInt. */
static napi_value int_value(napi_env env, const unsigned char *p, uint32_t size, bool sign)
{
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } u = { 0 };
	napi_value v = NULL;

	memcpy(&u, p, size);
	switch (size) {
	case 1: return num(env, sign ? (double)(int8_t)u.u8 : u.u8);
	case 2: return num(env, sign ? (double)(int16_t)u.u16 : u.u16);
	case 4: return num(env, sign ? (double)(int32_t)u.u32 : u.u32);
	case 8:
		if (sign)
			napi_create_bigint_int64(env, (int64_t)u.u64, &v);
		else
			napi_create_bigint_uint64(env, u.u64, &v);
		return v;
	}
	return NULL;
}

static napi_value array_value(napi_env env, const struct perfring_field *f,
			      const struct perfring_sample *s)
{
	const unsigned char *p;
	const void *data;
	size_t bytes, i, n;
	napi_value arr, e;

	if (perfring_field_array(f, s, &data, &bytes) || !f->elem_size ||
	    napi_create_array(env, &arr) != napi_ok)
		return NULL;
	p = data;
	n = bytes / f->elem_size;
	for (i = 0; i < n; i++) {
		if (!(e = int_value(env, p + i * f->elem_size, f->elem_size,
				    f->flags & PERFRING_FIELD_SIGNED)))
			return NULL;
		napi_set_element(env, arr, (uint32_t)i, e);
	}
	return arr;
}

/* An integer field through the library's bounds-checked accessors. */
static napi_value scalar_value(napi_env env, const struct perfring_field *f,
			       const struct perfring_sample *s)
{
	napi_value v = NULL;
	uint64_t u;
	int64_t i;

	if (f->flags & PERFRING_FIELD_SIGNED) {
		if (perfring_field_int(f, s, &i))
			return NULL;
		if (f->size == 8)
			napi_create_bigint_int64(env, i, &v);
		return f->size == 8 ? v : num(env, (double)i);
	}
	if (perfring_field_uint(f, s, &u))
		return NULL;
	if (f->size == 8)
		napi_create_bigint_uint64(env, u, &v);
	return f->size == 8 ? v : num(env, (double)u);
}

/* The field's value, or NULL when the payload does not hold it. */
static napi_value field_value(napi_env env, const struct perfring_field *f,
			      const struct perfring_sample *s)
{
	const uint32_t many = PERFRING_FIELD_ARRAY | PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC;
	const char *sp;
	size_t len;

	if (f->flags & PERFRING_FIELD_STRING)
		return perfring_field_str(f, s, &sp, &len) ? NULL : str(env, sp, len);
	if (f->flags & many)
		return array_value(env, f, s);
	return scalar_value(env, f, s);
}

static napi_value fields_value(struct batch *b, const struct pn_event *e, size_t ei,
			       const struct pn_watch *w, const struct pn_rec *r)
{
	struct perfring_sample s = { .raw = w->buf.raw + r->raw_off, .raw_size = r->raw_size };
	napi_value obj;
	size_t i, n = 0;

	if (napi_create_object(b->env, &obj) != napi_ok)
		return NULL;
	for (i = 0; i < e->field_n; i++) {
		napi_value v = field_value(b->env, &e->fields[i].f, &s);

		if (!v)
			continue;
		b->desc[n] = (napi_property_descriptor){ .name = b->field_key[ei * w->max_fields + i],
			.value = v, .attributes = napi_default_jsproperty };
		n++;
	}
	if (n && napi_define_properties(b->env, obj, n, b->desc) != napi_ok)
		return NULL;
	return obj;
}

static napi_value rec_value(struct batch *b, const struct pn_watch *w, const struct pn_rec *r)
{
	napi_value v[K_N], obj;
	napi_property_descriptor d[K_N];
	size_t i;

	v[K_EVENT] = b->ev_name[r->ev];
	v[K_CPU] = num(b->env, r->cpu);
	v[K_PID] = num(b->env, r->pid);
	v[K_TID] = num(b->env, r->tid);
	napi_create_bigint_uint64(b->env, r->time, &v[K_TIME]);
	v[K_FIELDS] = fields_value(b, &w->ev[r->ev], r->ev, w, r);
	if (napi_create_object(b->env, &obj) != napi_ok)
		return NULL;
	for (i = 0; i < K_N; i++) {
		if (!v[i])
			return NULL;
		d[i] = (napi_property_descriptor){ .name = b->key[i], .value = v[i],
			.attributes = napi_default_jsproperty };
	}
	return napi_define_properties(b->env, obj, K_N, d) == napi_ok ? obj : NULL;
}

static int batch_keys(struct batch *b, const struct pn_watch *w)
{
	size_t i, j;

	for (i = 0; i < K_N; i++)
		if (!(b->key[i] = str(b->env, rec_keys[i], NAPI_AUTO_LENGTH)))
			return -ENOMEM;
	b->ev_name = calloc(w->ev_n, sizeof(*b->ev_name));
	b->field_key = calloc(w->ev_n * w->max_fields + 1, sizeof(*b->field_key));
	b->desc = calloc(w->max_fields + 1, sizeof(*b->desc));
	if (!b->ev_name || !b->field_key || !b->desc)
		return -ENOMEM;
	for (i = 0; i < w->ev_n; i++) {
		if (!(b->ev_name[i] = str(b->env, w->ev[i].name, NAPI_AUTO_LENGTH)))
			return -ENOMEM;
		for (j = 0; j < w->ev[i].field_n; j++)
			if (!(b->field_key[i * w->max_fields + j] =
				      str(b->env, w->ev[i].fields[j].f.name, NAPI_AUTO_LENGTH)))
				return -ENOMEM;
	}
	return 0;
}

/* The buffered samples as a JavaScript array, or NULL. */
napi_value pn_batch_js(struct pn_watch *w)
{
	struct batch b = { .env = w->env };
	napi_value arr = NULL, obj;
	size_t i;

	if (batch_keys(&b, w) || napi_create_array_with_length(w->env, w->buf.n, &arr) != napi_ok)
		goto out;
	for (i = 0; i < w->buf.n; i++) {
		if (!(obj = rec_value(&b, w, &w->buf.rec[i])) ||
		    napi_set_element(w->env, arr, (uint32_t)i, obj) != napi_ok) {
			arr = NULL;
			break;
		}
	}
out:
	free(b.ev_name);
	free(b.field_key);
	free(b.desc);
	return arr;
}

static napi_value stats_value(napi_env env, const struct pn_cpu_stats *c)
{
	const struct perfring_cpu_stats *s = &c->st;
	const struct { const char *name; double v; } f[] = {
		{ "cpu", c->cpu }, { "records", (double)s->records }, { "bytes", (double)s->bytes },
		{ "lost", (double)s->lost }, { "corrupt", (double)s->corrupt },
		{ "wakeups", (double)s->wakeups }, { "maxFillPct", s->max_fill_pct },
		{ "hup", s->hup }, { "samples", (double)s->samples }, { "late", (double)s->late },
		{ "unknown", (double)s->unknown }, { "flushes", (double)s->flushes },
	};
	napi_value obj;
	size_t i;

	if (napi_create_object(env, &obj) != napi_ok)
		return NULL;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (napi_set_named_property(env, obj, f[i].name, num(env, f[i].v)) != napi_ok)
			return NULL;
	return obj;
}

napi_value pn_stats_js(napi_env env, const struct pn_cpu_stats *st, size_t n)
{
	napi_value arr, v;
	size_t i;

	if (napi_create_array_with_length(env, n, &arr) != napi_ok)
		return NULL;
	for (i = 0; i < n; i++)
		if (!(v = stats_value(env, &st[i])) ||
		    napi_set_element(env, arr, (uint32_t)i, v) != napi_ok)
			return NULL;
	return arr;
}
