/* SPDX-License-Identifier: MIT */
/* Spans of untrusted text (format files, /proc/mounts) and the small pieces
 * that parse them. A span is never NUL-terminated. */
#ifndef PR_TEXT_H
#define PR_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct span {
	const char *p;
	size_t len;
};

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_ident(char c)
{
	return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_print(char c)
{
	return c >= 0x20 && c <= 0x7e;
}

static inline struct span span_trim(struct span s)
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
static inline bool span_eat(struct span *s, const char *word)
{
	size_t n = strlen(word);

	if (s->len < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	s->len -= n;
	return true;
}

static inline bool span_is(struct span s, const char *word)
{
	return s.len == strlen(word) && memcmp(s.p, word, s.len) == 0;
}

static inline bool span_all_print(struct span s)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (!is_print(s.p[i]))
			return false;
	return true;
}

/* A whole span of decimal digits as a u32. */
static inline bool span_u32(struct span s, uint32_t *out)
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

/* Cuts the first line (without its '\n') off rest. */
static inline bool span_next_line(struct span *rest, struct span *line)
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

#endif
