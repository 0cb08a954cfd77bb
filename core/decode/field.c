/* SPDX-License-Identifier: MIT */
/* Typed, bounds-checked reads of tracepoint fields from a sample's RAW
 * payload. The payload has no alignment guarantee, hence memcpy throughout. */
#include "base/err.h"

#include <perfring/perfring.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define LOC_FLAGS (PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC)
#define NOT_SCALAR (PERFRING_FIELD_ARRAY | LOC_FLAGS | PERFRING_FIELD_STRING)

struct bytes {
	const unsigned char *p;
	size_t len;
};

static size_t raw_len(const struct perfring_sample *s)
{
	return s->raw ? s->raw_size : 0;
}

/* [off, off + len) lies inside the payload; 64-bit sums cannot wrap here. */
static int bytes_at(const struct perfring_sample *s, uint64_t off, uint64_t len,
		   struct bytes *out)
{
	static const unsigned char none[1];
	const unsigned char *base = s->raw ? s->raw : none;

	if (off + len > raw_len(s))
		return -ERANGE;
	out->p = base + off;
	out->len = (size_t)len;
	return 0;
}

/* A fixed field's bytes; a zero-size array (a flexible "x[]" member) runs to
 * the end of the payload. */
static int fixed_span(const struct perfring_field *f, const struct perfring_sample *s,
		      struct bytes *out)
{
	if ((f->flags & PERFRING_FIELD_ARRAY) && f->size == 0) {
		if (f->offset > raw_len(s))
			return -ERANGE;
		return bytes_at(s, f->offset, raw_len(s) - f->offset, out);
	}
	return bytes_at(s, f->offset, f->size, out);
}

/* A __data_loc/__rel_loc field's target: low 16 bits of the locator are the
 * offset (from the payload start, or from the locator's end for __rel_loc),
 * high 16 bits the length. */
static int loc_span(const struct perfring_field *f, const struct perfring_sample *s,
		    struct bytes *out)
{
	struct bytes loc;
	uint32_t word;
	uint64_t off;
	int err;

	if (f->size != sizeof(word))
		return -EINVAL;
	err = bytes_at(s, f->offset, sizeof(word), &loc);
	if (err)
		return err;
	memcpy(&word, loc.p, sizeof(word));
	off = word & 0xffffu;
	if (f->flags & PERFRING_FIELD_REL_LOC)
		off += (uint64_t)f->offset + sizeof(word);
	return bytes_at(s, off, word >> 16, out);
}

static int data_span(const struct perfring_field *f, const struct perfring_sample *s,
		     struct bytes *out)
{
	if (f->flags & LOC_FLAGS)
		return loc_span(f, s, out);
	return fixed_span(f, s, out);
}

/* NULL arguments also leave a sentence in this thread's last error. */
static bool args_ok(const struct perfring_field *f, const struct perfring_sample *s,
		    const void *out)
{
	if (f && s && out)
		return true;
	pr_null(NULL, "perfring_field accessor", !f ? "f" : !s ? "s" : "out");
	return false;
}

/* Copies a scalar field of exactly `size` bytes into out. */
static int read_exact(const struct perfring_field *f, const struct perfring_sample *s,
		      void *out, size_t size)
{
	struct bytes sp;
	int err;

	if (!args_ok(f, s, out) || (f->flags & NOT_SCALAR) || f->size != size)
		return -EINVAL;
	err = fixed_span(f, s, &sp);
	if (err)
		return err;
	memcpy(out, sp.p, size);
	return 0;
}

/* Reads a 1, 2, 4 or 8-byte scalar as its exact value, extended by the
 * field's own signedness, so int and uint agree with a C conversion. */
static int read_wide(const struct perfring_field *f, const struct perfring_sample *s,
		     uint64_t *out)
{
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } v;
	bool sign;
	int err;

	if (!args_ok(f, s, out) || (f->flags & NOT_SCALAR))
		return -EINVAL;
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
		return -EINVAL;
	err = read_exact(f, s, &v, f->size);
	if (err)
		return err;
	sign = f->flags & PERFRING_FIELD_SIGNED;
	switch (f->size) {
	case 1: *out = sign ? (uint64_t)(int64_t)(int8_t)v.u8 : v.u8; break;
	case 2: *out = sign ? (uint64_t)(int64_t)(int16_t)v.u16 : v.u16; break;
	case 4: *out = sign ? (uint64_t)(int64_t)(int32_t)v.u32 : v.u32; break;
	default: *out = v.u64; break;
	}
	return 0;
}

PERFRING_API int perfring_field_u8(const struct perfring_field *f, const struct perfring_sample *s,
				   uint8_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_u16(const struct perfring_field *f,
				    const struct perfring_sample *s, uint16_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_u32(const struct perfring_field *f,
				    const struct perfring_sample *s, uint32_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_u64(const struct perfring_field *f,
				    const struct perfring_sample *s, uint64_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_s8(const struct perfring_field *f, const struct perfring_sample *s,
				   int8_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_s16(const struct perfring_field *f,
				    const struct perfring_sample *s, int16_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_s32(const struct perfring_field *f,
				    const struct perfring_sample *s, int32_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_s64(const struct perfring_field *f,
				    const struct perfring_sample *s, int64_t *out)
{
	return read_exact(f, s, out, sizeof(*out));
}

PERFRING_API int perfring_field_uint(const struct perfring_field *f,
				     const struct perfring_sample *s, uint64_t *out)
{
	return read_wide(f, s, out);
}

PERFRING_API int perfring_field_int(const struct perfring_field *f,
				    const struct perfring_sample *s, int64_t *out)
{
	uint64_t v;
	int err;

	if (!out)
		return pr_null(NULL, "perfring_field_int", "out");
	err = read_wide(f, s, &v);
	if (!err)
		*out = (int64_t)v;
	return err;
}

PERFRING_API int perfring_field_str(const struct perfring_field *f,
				    const struct perfring_sample *s, const char **str,
				    size_t *len)
{
	struct bytes sp;
	const unsigned char *nul;
	int err;

	if (!args_ok(f, s, str) || !args_ok(f, s, len) || !(f->flags & PERFRING_FIELD_STRING))
		return -EINVAL;
	err = data_span(f, s, &sp);
	if (err)
		return err;
	nul = sp.len ? memchr(sp.p, '\0', sp.len) : NULL;
	*str = (const char *)sp.p;
	*len = nul ? (size_t)(nul - sp.p) : sp.len;
	return 0;
}

PERFRING_API int perfring_field_array(const struct perfring_field *f,
				      const struct perfring_sample *s, const void **data,
				      size_t *bytes)
{
	struct bytes sp;
	int err;

	if (!args_ok(f, s, data) || !args_ok(f, s, bytes) ||
	    !(f->flags & (PERFRING_FIELD_ARRAY | LOC_FLAGS)))
		return -EINVAL;
	err = data_span(f, s, &sp);
	if (err)
		return err;
	*data = sp.p;
	*bytes = sp.len;
	return 0;
}
