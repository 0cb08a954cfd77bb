/* SPDX-License-Identifier: MIT */
/*
 * Format-file parser and field accessors on hostile bytes.
 * fuzz-sources: core/kernel/tracefs.c core/kernel/format.c core/decode/field.c core/base/err.c core/base/sys.c
 *
 * Input: TEXT PAYLOAD P, where the last byte P is the payload's length (a
 * format file as-is also works: its tail becomes the payload). TEXT goes to
 * pr_format_parse(); every field found is then read with every accessor
 * from PAYLOAD. Both live in exact-size heap copies, so ASan catches any
 * read past their ends.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <perfring/perfring.h>

#include "kernel/tracefs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

#define LOC_FLAGS (PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC)

struct buf {
	const uint8_t *p;
	size_t len;
};

static uint8_t *copy_exact(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	if (c && len)
		memcpy(c, p, len);
	return c;
}

static void check_rc(int rc)
{
	CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
}

/* A returned span must lie inside the payload. */
static void check_span(struct buf pl, const void *p, size_t len)
{
	const uint8_t *b = p;

	CHECK(b >= pl.p || (pl.len == 0 && len == 0));
	if (pl.len)
		CHECK(b >= pl.p && len <= pl.len && (size_t)(b - pl.p) <= pl.len - len);
}

static void read_ints(const struct perfring_field *f, const struct perfring_sample *s)
{
	uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
	int8_t s8; int16_t s16; int32_t s32; int64_t s64;
	int rc;

	check_rc(perfring_field_u8(f, s, &u8));
	check_rc(perfring_field_u16(f, s, &u16));
	check_rc(perfring_field_u32(f, s, &u32));
	check_rc(perfring_field_u64(f, s, &u64));
	check_rc(perfring_field_s8(f, s, &s8));
	check_rc(perfring_field_s16(f, s, &s16));
	check_rc(perfring_field_s32(f, s, &s32));
	check_rc(perfring_field_s64(f, s, &s64));
	rc = perfring_field_uint(f, s, &u64);
	check_rc(rc);
	if (rc == 0)
		CHECK((uint64_t)f->offset + f->size <= s->raw_size);
	check_rc(perfring_field_int(f, s, &s64));
}

static void read_field(const struct perfring_field *f, struct buf pl)
{
	struct perfring_sample s = { .raw = pl.p, .raw_size = (uint32_t)pl.len };
	const char *str;
	const void *arr;
	size_t len;
	int rc;

	read_ints(f, &s);
	rc = perfring_field_str(f, &s, &str, &len);
	check_rc(rc);
	if (rc == 0) {
		check_span(pl, str, len);
		CHECK(!len || !memchr(str, '\0', len));
	}
	rc = perfring_field_array(f, &s, &arr, &len);
	check_rc(rc);
	if (rc == 0)
		check_span(pl, arr, len);
}

static void check_field(const struct perfring_field *f)
{
	size_t name_len = strlen(f->name);

	CHECK(name_len > 0 && name_len <= 255);
	CHECK(strlen(f->type) > 0 && strlen(f->type) <= 255);
	CHECK((uint64_t)f->offset + f->size <= UINT32_MAX);
	CHECK(f->elem_size > 0 || !(f->flags & (PERFRING_FIELD_ARRAY | LOC_FLAGS)));
	if (f->flags & LOC_FLAGS)
		CHECK(f->size == 4);
}

static void check_parsed(const struct pr_tp_format *fmt, struct buf pl)
{
	size_t i;

	CHECK(fmt->nfields <= 1024);
	CHECK(!fmt->nfields == !fmt->fields);
	for (i = 0; i < fmt->nfields; i++) {
		check_field(&fmt->fields[i]);
		/* names are unique, so lookup finds this very field */
		CHECK(pr_format_field(fmt, fmt->fields[i].name) == &fmt->fields[i]);
		read_field(&fmt->fields[i], pl);
	}
	CHECK(!pr_format_field(fmt, ""));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr_tp_format fmt;
	struct buf pl;
	size_t plen, tlen;
	uint8_t *text, *payload;
	char err[128];
	int rc;

	if (!size)
		return 0;
	plen = data[size - 1];
	if (plen > size - 1)
		plen = size - 1;
	tlen = size - 1 - plen;
	text = copy_exact(data, tlen);
	payload = copy_exact(data + tlen, plen);
	if (!text || !payload)
		abort();
	err[0] = '\0';
	rc = pr_format_parse((const char *)text, tlen, &fmt, err, sizeof(err));
	if (rc) {
		CHECK(rc == -EINVAL);
		CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
		CHECK(fmt.nfields == 0 && fmt.fields == NULL);
	} else {
		pl = (struct buf){ payload, plen };
		check_parsed(&fmt, pl);
	}
	pr_format_free(&fmt);
	free(text);
	free(payload);
	return 0;
}
