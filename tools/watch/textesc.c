/* SPDX-License-Identifier: MIT */
/* Hostile text made safe to show (see textesc.h). */
#include "config.h"
#include "textesc.h"

#include <stdio.h>

static bool plain(unsigned char c, unsigned flags)
{
	return c >= 0x20 && c < 0x7f && c != '\\' && !(c == '"' && (flags & ESC_QUOTE));
}

/* The escape of c into e (at most 5 bytes with its NUL); returns its length. */
static size_t esc_one(char *e, unsigned char c)
{
	switch (c) {
	case '\\': return (size_t)snprintf(e, 5, "\\\\");
	case '"': return (size_t)snprintf(e, 5, "\\\"");
	case '\n': return (size_t)snprintf(e, 5, "\\n");
	case '\t': return (size_t)snprintf(e, 5, "\\t");
	default: return (size_t)snprintf(e, 5, "\\x%02x", c);
	}
}

size_t esc_text(char *dst, size_t cap, const char *s, size_t len, unsigned flags)
{
	size_t o = 0;

	if (!cap)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];
		size_t n;

		if (plain(c, flags)) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)c;
			continue;
		}
		n = esc_one(e, c);
		if (o + n >= cap)
			break;
		for (size_t k = 0; k < n; k++)
			dst[o++] = e[k];
	}
	dst[o] = '\0';
	return o;
}

bool esc_needs_quotes(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == ' ' || !plain((unsigned char)s[i], ESC_QUOTE))
			return true;
	return !len;
}
