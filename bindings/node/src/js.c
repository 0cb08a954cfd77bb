/* SPDX-License-Identifier: MIT */
/* Buffered samples and stats as JavaScript values: a batch is one
 * ArrayBuffer (index.js makes the Sample objects over it), and a sample's
 * fields are decoded here on first access. Integer fields of 1, 2 or 4
 * bytes are numbers, of 8 bytes BigInts; strings are strings; other arrays
 * are Arrays of those. */
#include "pn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* One sample's fields: an object of the event's fields the payload holds.
 * Called from a Sample's `fields` getter, so only for the samples whose
 * fields are read. */
napi_value pn_fields_js(napi_env env, const struct pn_event *e, const void *raw, uint32_t size)
{
	struct perfring_sample s = { .raw = raw, .raw_size = size };
	napi_property_descriptor *desc = NULL;
	napi_value obj, v, key;
	size_t i, n = 0;

	if (napi_create_object(env, &obj) != napi_ok)
		return NULL;
	if (!e->field_n)
		return obj;
	if (!(desc = calloc(e->field_n, sizeof(*desc))))
		return NULL;
	for (i = 0; i < e->field_n; i++) {
		if (!(v = field_value(env, &e->fields[i].f, &s)))
			continue;
		if (!(key = str(env, e->fields[i].f.name, NAPI_AUTO_LENGTH))) {
			obj = NULL;
			break;
		}
		desc[n++] = (napi_property_descriptor){ .name = key, .value = v,
			.attributes = napi_default_jsproperty };
	}
	if (obj && n && napi_define_properties(env, obj, n, desc) != napi_ok)
		obj = NULL;
	free(desc);
	return obj;
}

/* An event whose fields are all plain integers of 1, 2, 4 or 8 bytes:
 * [name, offset, size, signed, ...], which index.js decodes itself when the
 * payload holds every one; else null (every sample's fields from
 * pn_fields_js). */
static napi_value layout_js(napi_env env, const struct pn_event *e)
{
	const uint32_t not_scalar = PERFRING_FIELD_ARRAY | PERFRING_FIELD_DATA_LOC |
				    PERFRING_FIELD_REL_LOC | PERFRING_FIELD_STRING;
	napi_value arr, v[4];
	size_t i, k;

	for (i = 0; i < e->field_n; i++) {
		const struct perfring_field *f = &e->fields[i].f;

		if ((f->flags & not_scalar) ||
		    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
			return NULL;
	}
	if (napi_create_array_with_length(env, e->field_n * 4, &arr) != napi_ok)
		return NULL;
	for (i = 0; i < e->field_n; i++) {
		const struct perfring_field *f = &e->fields[i].f;

		if (!(v[0] = str(env, f->name, NAPI_AUTO_LENGTH)) ||
		    napi_create_uint32(env, f->offset, &v[1]) != napi_ok ||
		    napi_create_uint32(env, f->size, &v[2]) != napi_ok ||
		    napi_get_boolean(env, f->flags & PERFRING_FIELD_SIGNED, &v[3]) != napi_ok)
			return NULL;
		for (k = 0; k < 4; k++)
			if (napi_set_element(env, arr, (uint32_t)(i * 4 + k), v[k]) != napi_ok)
				return NULL;
	}
	return arr;
}

/* Each event's layout_js (null where index.js leaves the fields to C). */
napi_value pn_layouts_js(napi_env env, const struct pn_watch *w)
{
	napi_value arr, v, null;
	size_t i;

	if (napi_create_array_with_length(env, w->ev_n, &arr) != napi_ok ||
	    napi_get_null(env, &null) != napi_ok)
		return NULL;
	for (i = 0; i < w->ev_n; i++) {
		if (!(v = layout_js(env, &w->ev[i])))
			v = null;
		if (napi_set_element(env, arr, (uint32_t)i, v) != napi_ok)
			return NULL;
	}
	return arr;
}

/* The buffered samples as one ArrayBuffer: the headers, then the RAW arena
 * (pn_rec says how index.js reads it). NULL on failure. */
napi_value pn_batch_js(struct pn_watch *w)
{
	size_t head = w->buf.n * PN_REC_SIZE;
	napi_value ab;
	void *data;

	if (head / PN_REC_SIZE != w->buf.n || head + w->buf.raw_n < head ||
	    napi_create_arraybuffer(w->env, head + w->buf.raw_n, &data, &ab) != napi_ok)
		return NULL;
	memcpy(data, w->buf.rec, head);
	if (w->buf.raw_n)
		memcpy((unsigned char *)data + head, w->buf.raw, w->buf.raw_n);
	return ab;
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
