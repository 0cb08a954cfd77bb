/* SPDX-License-Identifier: MIT */
/* A tracepoint's format file: its ID and its fields, parsed from untrusted
 * text with bounds everywhere. */
#include "kernel/tracefs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sys.h"
#include "base/text.h"

#define FIELDS_MAX 1024
#define NAME_LEN_MAX 255
#define TYPE_LEN_MAX 255

#define LOC_FLAGS (PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC)

/* One field line, its strings still pointing into the text. The type is
 * reported as written with the array part moved onto it: "char[16]". */
struct draft {
	struct span name;
	struct span type;
	struct span dims;       /* "[16]" of "char comm[16]", or empty */
	uint32_t offset, size, flags, elem_size;
};

struct parser {
	struct span rest;       /* text not yet split into lines */
	unsigned int line;      /* number of the line being parsed, from 1 */
	bool have_id;
	uint32_t id;
	struct draft *fields;
	size_t n, cap;
	const char *why;        /* reason for -EINVAL */
};

static int fail(struct parser *ps, const char *why)
{
	ps->why = why;
	return -EINVAL;
}

/* ------------------------------------------------------------- type lookup */

struct type_size {
	const char *name;
	uint32_t size;
};

/* Element sizes for arrays whose length the format does not give ("x[]",
 * __data_loc). Fixed arrays take theirs from size / length instead. */
static const struct type_size type_sizes[] = {
	{ "char", 1 }, { "signed char", 1 }, { "unsigned char", 1 }, { "bool", 1 },
	{ "u8", 1 }, { "s8", 1 }, { "__u8", 1 }, { "__s8", 1 },
	{ "int8_t", 1 }, { "uint8_t", 1 },
	{ "short", 2 }, { "unsigned short", 2 }, { "u16", 2 }, { "s16", 2 },
	{ "__u16", 2 }, { "__s16", 2 }, { "int16_t", 2 }, { "uint16_t", 2 },
	{ "int", 4 }, { "unsigned int", 4 }, { "unsigned", 4 }, { "u32", 4 },
	{ "s32", 4 }, { "__u32", 4 }, { "__s32", 4 }, { "int32_t", 4 },
	{ "uint32_t", 4 }, { "pid_t", 4 },
	{ "long long", 8 }, { "unsigned long long", 8 }, { "u64", 8 }, { "s64", 8 },
	{ "__u64", 8 }, { "__s64", 8 }, { "int64_t", 8 }, { "uint64_t", 8 },
	{ "long", sizeof(long) }, { "unsigned long", sizeof(long) },
	{ "size_t", sizeof(size_t) }, { "ssize_t", sizeof(size_t) },
};

/* The element type of a declaration: no qualifiers, no trailing "[...]". */
static struct span base_type(struct span t)
{
	const char *lb;

	t = span_trim(t);
	if (t.len && t.p[t.len - 1] == ']') {
		lb = memrchr(t.p, '[', t.len);
		if (lb)
			t.len = (size_t)(lb - t.p);
	}
	t = span_trim(t);
	while (span_eat(&t, "const ") || span_eat(&t, "volatile "))
		t = span_trim(t);
	return t;
}

static uint32_t type_elem_size(struct span base)
{
	size_t i;

	if (memchr(base.p, '*', base.len))
		return sizeof(void *);
	for (i = 0; i < sizeof(type_sizes) / sizeof(type_sizes[0]); i++)
		if (span_is(base, type_sizes[i].name))
			return type_sizes[i].size;
	return 1; /* unknown: count bytes */
}

static bool is_char_type(struct span base)
{
	return span_is(base, "char") || span_is(base, "signed char") ||
	       span_is(base, "unsigned char");
}

/* ------------------------------------------------------- field declaration */

/* Printable, and no brackets: what may stand between "[" and "]". */
static bool plain_len(struct span s)
{
	return span_all_print(s) && !memchr(s.p, '[', s.len) && !memchr(s.p, ']', s.len);
}

/* Splits "TYPE NAME" or "TYPE NAME[LEN]" into its parts. */
static int split_decl(struct parser *ps, struct span decl, struct draft *d, struct span *len,
		      bool *has_len)
{
	const char *lb, *start;
	size_t end = decl.len;

	*has_len = false;
	if (end && decl.p[end - 1] == ']') {
		lb = memrchr(decl.p, '[', end);
		if (!lb)
			return fail(ps, "unbalanced ']'");
		*len = span_trim((struct span){ lb + 1, end - 1 - (size_t)(lb + 1 - decl.p) });
		d->dims = (struct span){ lb, end - (size_t)(lb - decl.p) };
		*has_len = true;
		end = (size_t)(lb - decl.p);
	}
	start = decl.p + end;
	while (start > decl.p && is_ident(start[-1]))
		start--;
	d->name = (struct span){ start, end - (size_t)(start - decl.p) };
	d->type = span_trim((struct span){ decl.p, (size_t)(start - decl.p) });
	return 0;
}

static int check_decl(struct parser *ps, const struct draft *d, struct span len, bool has_len)
{
	if (!d->name.len || is_digit(d->name.p[0]))
		return fail(ps, "missing field name");
	if (d->name.len > NAME_LEN_MAX)
		return fail(ps, "field name too long (> 255)");
	if (!d->type.len)
		return fail(ps, "missing field type");
	if (d->type.len + d->dims.len > TYPE_LEN_MAX)
		return fail(ps, "field type too long (> 255)");
	if (!span_all_print(d->type) || (has_len && !plain_len(len)))
		return fail(ps, "bad character in field declaration");
	return 0;
}

/* "__data_loc TYPE" or "__rel_loc TYPE": sets the flag and returns TYPE. */
static uint32_t loc_kind(struct span type, struct span *rest)
{
	*rest = type;
	if (span_eat(rest, "__data_loc") && (!rest->len || is_blank(rest->p[0])))
		return PERFRING_FIELD_DATA_LOC;
	*rest = type;
	if (span_eat(rest, "__rel_loc") && (!rest->len || is_blank(rest->p[0])))
		return PERFRING_FIELD_REL_LOC;
	*rest = type;
	return 0;
}

static int shape_loc(struct parser *ps, struct draft *d, struct span elem)
{
	struct span base = base_type(elem);

	if (!base.len)
		return fail(ps, "locator without an element type");
	if (d->size != 4)
		return fail(ps, "locator size is not 4");
	d->elem_size = type_elem_size(base);
	if (is_char_type(base))
		d->flags |= PERFRING_FIELD_STRING;
	return 0;
}

/* A fixed array's element size is size / length when the length is a
 * number; otherwise ("x[]", "x[SOME_MACRO]") it comes from the type. */
static int shape_array(struct parser *ps, struct draft *d, struct span len)
{
	struct span base = base_type(d->type);
	uint32_t n = 0;

	d->flags |= PERFRING_FIELD_ARRAY;
	if (is_char_type(base))
		d->flags |= PERFRING_FIELD_STRING;
	if (len.len && is_digit(len.p[0]) && !span_u32(len, &n))
		return fail(ps, "bad array length");
	if (n == 0) {
		d->elem_size = type_elem_size(base);
		if (d->size % d->elem_size)
			d->elem_size = 1;
		return 0;
	}
	if (d->size == 0 || d->size % n != 0)
		return fail(ps, "array size is not a multiple of its length");
	d->elem_size = d->size / n;
	return 0;
}

static int shape_field(struct parser *ps, struct span decl, struct draft *d)
{
	struct span len = { 0 }, elem;
	bool has_len;
	int err;

	err = split_decl(ps, span_trim(decl), d, &len, &has_len);
	if (!err)
		err = check_decl(ps, d, len, has_len);
	if (err)
		return err;
	d->flags |= loc_kind(d->type, &elem);
	if (d->flags & LOC_FLAGS)
		return shape_loc(ps, d, elem);
	if (has_len)
		return shape_array(ps, d, len);
	d->elem_size = d->size;
	return 0;
}

/* --------------------------------------------------------------- field line */

/* Reads "KEY:NUMBER;" (after optional blanks) from the front of s. */
static bool eat_attr(struct span *s, const char *key, uint32_t *out)
{
	const char *semi;
	struct span num;

	*s = span_trim(*s);
	if (!span_eat(s, key) || !span_eat(s, ":"))
		return false;
	semi = memchr(s->p, ';', s->len);
	if (!semi)
		return false;
	num = span_trim((struct span){ s->p, (size_t)(semi - s->p) });
	s->len -= (size_t)(semi + 1 - s->p);
	s->p = semi + 1;
	return span_u32(num, out);
}

static int parse_attrs(struct parser *ps, struct span rest, struct draft *d)
{
	uint32_t sign;

	if (!eat_attr(&rest, "offset", &d->offset))
		return fail(ps, "bad or missing offset");
	if (!eat_attr(&rest, "size", &d->size))
		return fail(ps, "bad or missing size");
	if (!eat_attr(&rest, "signed", &sign) || sign > 1)
		return fail(ps, "bad or missing signed");
	if (span_trim(rest).len)
		return fail(ps, "trailing text after field");
	if ((uint64_t)d->offset + d->size > UINT32_MAX)
		return fail(ps, "offset + size overflows");
	d->flags = sign ? PERFRING_FIELD_SIGNED : 0;
	return 0;
}

static int push_draft(struct parser *ps, const struct draft *d)
{
	struct draft *grown;
	size_t cap;

	if (ps->n == FIELDS_MAX)
		return fail(ps, "too many fields (> 1024)");
	if (ps->n == ps->cap) {
		cap = ps->cap ? ps->cap * 2 : 32;
		grown = pr_realloc(ps->fields, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		ps->fields = grown;
		ps->cap = cap;
	}
	ps->fields[ps->n++] = *d;
	return 0;
}

/* "field:DECL;\toffset:O;\tsize:S;\tsigned:X;" without the "field:". */
static int parse_field(struct parser *ps, struct span s)
{
	struct draft d = { 0 };
	const char *semi = memchr(s.p, ';', s.len);
	struct span decl;
	int err;

	if (!semi)
		return fail(ps, "truncated field line");
	decl = (struct span){ s.p, (size_t)(semi - s.p) };
	err = parse_attrs(ps, (struct span){ semi + 1, s.len - decl.len - 1 }, &d);
	if (!err)
		err = shape_field(ps, decl, &d);
	if (!err)
		err = push_draft(ps, &d);
	return err;
}

static int parse_id(struct parser *ps, struct span s)
{
	if (ps->have_id)
		return fail(ps, "duplicate ID");
	if (!span_u32(span_trim(s), &ps->id))
		return fail(ps, "bad ID");
	ps->have_id = true;
	return 0;
}

/* ---------------------------------------------------------------- the file */

/* One line; 1 at "print fmt:", after which nothing is ours to parse. */
static int parse_line(struct parser *ps, struct span line)
{
	line = span_trim(line);
	if (!line.len || span_eat(&line, "name:") || span_is(line, "format:"))
		return 0;
	if (span_eat(&line, "field:"))
		return parse_field(ps, line);
	if (span_eat(&line, "ID:"))
		return parse_id(ps, line);
	if (span_eat(&line, "print fmt:"))
		return 1;
	return fail(ps, "unexpected text");
}

static int parse_lines(struct parser *ps)
{
	struct span line;
	int err;

	while (span_next_line(&ps->rest, &line)) {
		ps->line++;
		err = parse_line(ps, line);
		if (err)
			return err < 0 ? err : 0;
	}
	return 0;
}

static bool has_duplicates(const struct parser *ps)
{
	size_t i, j;

	for (i = 0; i < ps->n; i++)
		for (j = i + 1; j < ps->n; j++)
			if (ps->fields[i].name.len == ps->fields[j].name.len &&
			    !memcmp(ps->fields[i].name.p, ps->fields[j].name.p,
				    ps->fields[i].name.len))
				return true;
	return false;
}

/* Copies a then b into the pool as one NUL-terminated string. */
static const char *copy_spans(char **pool, struct span a, struct span b)
{
	char *dst = *pool;

	memcpy(dst, a.p, a.len);
	if (b.len)
		memcpy(dst + a.len, b.p, b.len);
	dst[a.len + b.len] = '\0';
	*pool += a.len + b.len + 1;
	return dst;
}

/* One allocation: the field array, then every name and type string. */
static int build(const struct parser *ps, struct pr_tp_format *out)
{
	size_t i, bytes = ps->n * sizeof(*out->fields);
	struct perfring_field *f;
	const struct draft *d;
	char *pool;

	for (i = 0; i < ps->n; i++)
		bytes += ps->fields[i].name.len + ps->fields[i].type.len +
			 ps->fields[i].dims.len + 2;
	f = pr_malloc(bytes);
	if (!f)
		return -ENOMEM;
	pool = (char *)(f + ps->n);
	for (i = 0; i < ps->n; i++) {
		d = &ps->fields[i];
		f[i] = (struct perfring_field){
			.offset = d->offset, .size = d->size,
			.flags = d->flags, .elem_size = d->elem_size,
		};
		f[i].name = copy_spans(&pool, d->name, (struct span){ 0 });
		f[i].type = copy_spans(&pool, d->type, d->dims);
	}
	out->fields = f;
	out->nfields = ps->n;
	return 0;
}

static int finish(struct parser *ps, struct pr_tp_format *out)
{
	int err;

	if (!ps->have_id)
		return fail(ps, "missing ID");
	if (has_duplicates(ps))
		return fail(ps, "duplicate field name");
	if (ps->n) {
		err = build(ps, out);
		if (err)
			return err;
	}
	out->id = ps->id;
	return 0;
}

static void report(const struct parser *ps, int err, char *errbuf, size_t errlen)
{
	if (err == -ENOMEM)
		pr_reason(errbuf, errlen, "out of memory");
	else if (ps->line)
		pr_reason(errbuf, errlen, "line %u: %s", ps->line, ps->why);
	else
		pr_reason(errbuf, errlen, "%s", ps->why);
}

int pr_format_parse(const char *text, size_t len, struct pr_tp_format *out, char *err,
		    size_t errlen)
{
	struct parser ps = { .rest = { text, len } };
	int rc;

	if (!out || (!text && len)) {
		pr_reason(err, errlen, "no text");
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	rc = parse_lines(&ps);
	if (!rc) {
		ps.line = 0; /* what finish() finds wrong is no one line's fault */
		rc = finish(&ps, out);
	}
	if (rc)
		report(&ps, rc, err, errlen);
	free(ps.fields);
	return rc;
}

void pr_format_free(struct pr_tp_format *f)
{
	if (!f)
		return;
	free(f->fields);
	memset(f, 0, sizeof(*f));
}

const struct perfring_field *pr_format_field(const struct pr_tp_format *f, const char *name)
{
	size_t i;

	if (!f || !name)
		return NULL;
	for (i = 0; i < f->nfields; i++)
		if (strcmp(f->fields[i].name, name) == 0)
			return &f->fields[i];
	return NULL;
}

