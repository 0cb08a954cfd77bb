/* SPDX-License-Identifier: MIT */
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

#define FORMAT_FILE_MAX (64 * 1024)
#define MOUNTS_FILE_MAX (1024 * 1024)
#define FIELDS_MAX 1024
#define NAME_LEN_MAX 255
#define TYPE_LEN_MAX 255

#define LOC_FLAGS (PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC)

/* A run of bytes inside the caller's text; never NUL-terminated. */
struct span {
	const char *p;
	size_t len;
};

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

/* ------------------------------------------------------------ small helpers */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident(char c)
{
	return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_print(char c)
{
	return c >= 0x20 && c <= 0x7e;
}

static struct span trim(struct span s)
{
	while (s.len && is_blank(s.p[0])) {
		s.p++;
		s.len--;
	}
	while (s.len && is_blank(s.p[s.len - 1]))
		s.len--;
	return s;
}

/* If s begins with word, drops it from s. */
static bool eat(struct span *s, const char *word)
{
	size_t n = strlen(word);

	if (s->len < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	s->len -= n;
	return true;
}

static bool span_is(struct span s, const char *word)
{
	return s.len == strlen(word) && memcmp(s.p, word, s.len) == 0;
}

static bool all_print(struct span s)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (!is_print(s.p[i]))
			return false;
	return true;
}

/* A whole span of decimal digits as a u32. */
static bool span_u32(struct span s, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s.len)
		return false;
	for (i = 0; i < s.len; i++) {
		if (!is_digit(s.p[i]))
			return false;
		v = v * 10 + (uint64_t)(s.p[i] - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

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

	t = trim(t);
	if (t.len && t.p[t.len - 1] == ']') {
		lb = memrchr(t.p, '[', t.len);
		if (lb)
			t.len = (size_t)(lb - t.p);
	}
	t = trim(t);
	while (eat(&t, "const ") || eat(&t, "volatile "))
		t = trim(t);
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
	return all_print(s) && !memchr(s.p, '[', s.len) && !memchr(s.p, ']', s.len);
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
		*len = trim((struct span){ lb + 1, end - 1 - (size_t)(lb + 1 - decl.p) });
		d->dims = (struct span){ lb, end - (size_t)(lb - decl.p) };
		*has_len = true;
		end = (size_t)(lb - decl.p);
	}
	start = decl.p + end;
	while (start > decl.p && is_ident(start[-1]))
		start--;
	d->name = (struct span){ start, end - (size_t)(start - decl.p) };
	d->type = trim((struct span){ decl.p, (size_t)(start - decl.p) });
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
	if (!all_print(d->type) || (has_len && !plain_len(len)))
		return fail(ps, "bad character in field declaration");
	return 0;
}

/* "__data_loc TYPE" or "__rel_loc TYPE": sets the flag and returns TYPE. */
static uint32_t loc_kind(struct span type, struct span *rest)
{
	*rest = type;
	if (eat(rest, "__data_loc") && (!rest->len || is_blank(rest->p[0])))
		return PERFRING_FIELD_DATA_LOC;
	*rest = type;
	if (eat(rest, "__rel_loc") && (!rest->len || is_blank(rest->p[0])))
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

	err = split_decl(ps, trim(decl), d, &len, &has_len);
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

	*s = trim(*s);
	if (!eat(s, key) || !eat(s, ":"))
		return false;
	semi = memchr(s->p, ';', s->len);
	if (!semi)
		return false;
	num = trim((struct span){ s->p, (size_t)(semi - s->p) });
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
	if (trim(rest).len)
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
	if (!span_u32(trim(s), &ps->id))
		return fail(ps, "bad ID");
	ps->have_id = true;
	return 0;
}

/* ---------------------------------------------------------------- the file */

/* Cuts the first line (without its '\n') off rest. */
static bool next_line(struct span *rest, struct span *line)
{
	const char *nl;
	size_t used;

	if (!rest->len)
		return false;
	nl = memchr(rest->p, '\n', rest->len);
	line->p = rest->p;
	line->len = nl ? (size_t)(nl - rest->p) : rest->len;
	used = line->len + (nl ? 1 : 0);
	rest->p += used;
	rest->len -= used;
	return true;
}

/* One line; 1 at "print fmt:", after which nothing is ours to parse. */
static int parse_line(struct parser *ps, struct span line)
{
	line = trim(line);
	if (!line.len || eat(&line, "name:") || span_is(line, "format:"))
		return 0;
	if (eat(&line, "field:"))
		return parse_field(ps, line);
	if (eat(&line, "ID:"))
		return parse_id(ps, line);
	if (eat(&line, "print fmt:"))
		return 1;
	return fail(ps, "unexpected text");
}

static int parse_lines(struct parser *ps)
{
	struct span line;
	int err;

	while (next_line(&ps->rest, &line)) {
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
		set_err(errbuf, errlen, "out of memory");
	else if (ps->line)
		set_err(errbuf, errlen, "line %u: %s", ps->line, ps->why);
	else
		set_err(errbuf, errlen, "%s", ps->why);
}

int pr_format_parse(const char *text, size_t len, struct pr_tp_format *out, char *err,
		    size_t errlen)
{
	struct parser ps = { .rest = { text, len } };
	int rc;

	if (!out || (!text && len)) {
		set_err(err, errlen, "no text");
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

/* ------------------------------------------------------------- tracefs root */

/* 0 when root/events is a readable directory, else -errno. */
static int events_dir(const char *root)
{
	char path[PATH_MAX];
	int n, fd;

	n = snprintf(path, sizeof(path), "%s/events", root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = pr_open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static bool has_events(const char *root)
{
	return events_dir(root) == 0;
}

static int copy_root(const char *root, char *buf, size_t len)
{
	size_t n = strlen(root);

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, root, n + 1);
	return 0;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* /proc/mounts writes space, tab, newline and backslash as \ooo. */
static int unescape_path(struct span s, char *buf, size_t len)
{
	size_t i = 0, o = 0;
	unsigned int v;
	char c;

	if (!len)
		return -ENAMETOOLONG;
	while (i < s.len) {
		c = s.p[i++];
		if (c == '\\' && s.len - i >= 3 && is_octal(s.p[i]) && is_octal(s.p[i + 1]) &&
		    is_octal(s.p[i + 2])) {
			v = (unsigned int)((s.p[i] - '0') * 64 + (s.p[i + 1] - '0') * 8 +
					   (s.p[i + 2] - '0'));
			if (v && v <= 0xff) {
				c = (char)v;
				i += 3;
			}
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		buf[o++] = c;
	}
	buf[o] = '\0';
	return 0;
}

/* The space-separated word number `idx` of a /proc/mounts line. */
static struct span mount_word(struct span line, unsigned int idx)
{
	const char *sp;

	for (;;) {
		sp = memchr(line.p, ' ', line.len);
		if (!idx--)
			return (struct span){ line.p, sp ? (size_t)(sp - line.p) : line.len };
		if (!sp)
			return (struct span){ line.p + line.len, 0 };
		line.len -= (size_t)(sp + 1 - line.p);
		line.p = sp + 1;
	}
}

static int root_from_mounts(char *buf, size_t len)
{
	struct span rest, line;
	size_t n;
	char *text;
	int err = -ENODEV;

	if (pr_read_file("/proc/mounts", MOUNTS_FILE_MAX, &text, &n))
		return -ENODEV;
	rest = (struct span){ text, n };
	while (next_line(&rest, &line)) {
		if (!span_is(mount_word(line, 2), "tracefs"))
			continue;
		err = unescape_path(mount_word(line, 1), buf, len);
		if (!err && !has_events(buf))
			err = -ENODEV;
		break;
	}
	free(text);
	return err;
}

int pr_tracefs_root(char *buf, size_t len)
{
	static const char *const known[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *env = secure_getenv("PERFRING_TRACEFS");
	size_t i;

	if (!buf)
		return -EINVAL;
	if (env && *env)
		return has_events(env) ? copy_root(env, buf, len) : -ENODEV;
	int err, denied = 0;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		err = events_dir(known[i]);
		if (!err)
			return copy_root(known[i], buf, len);
		if ((err == -EACCES || err == -EPERM) && !denied)
			denied = err;
	}
	err = root_from_mounts(buf, len);
	/* Mounted but not ours to read (mode 0700 for root) is not "missing". */
	return err == -ENODEV && denied ? denied : err;
}

/* ------------------------------------------------------------- tracepoints */

static bool plain_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int read_format(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	int rc = pr_read_file(path, FORMAT_FILE_MAX, text, len);

	/* events/<file>/... or events/<sys>/enable/...: no such tracepoint */
	if (rc == -ENOTDIR)
		rc = -ENOENT;
	if (rc)
		set_err(err, errlen, "%s: %s", path, strerror(-rc));
	return rc;
}

int pr_tracefs_load(const char *root, const char *system, const char *name,
		    struct pr_tp_format *out, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	int n, rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!root || !out || !plain_name(system) || !plain_name(name)) {
		set_err(err, errlen, "bad tracepoint name");
		return -EINVAL;
	}
	n = snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, system, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		set_err(err, errlen, "tracepoint path too long");
		return -ENAMETOOLONG;
	}
	rc = read_format(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = pr_format_parse(text, len, out, err, errlen);
	free(text);
	return rc;
}
