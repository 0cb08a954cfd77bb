/* SPDX-License-Identifier: MIT */
/* Hostile text made safe to show: one escaping for the terminal, --print,
 * JSON and /metrics, so a comm holding "\033[2J" is never written raw. */
#ifndef PERFRING_TEXTESC_H
#define PERFRING_TEXTESC_H

#include <stdbool.h>
#include <stddef.h>

#define ESC_QUOTE 1u    /* also escape '"' (for a quoted value) */

/* Writes s[0..len) to dst (NUL-terminated, at most cap - 1 bytes) with
 * printable ASCII kept and everything else escaped as \\, \n, \t or \xNN;
 * the mapping is one to one, so distinct values stay distinct. An escape
 * that does not fit is left out whole. Returns the bytes written. */
size_t esc_text(char *dst, size_t cap, const char *s, size_t len, unsigned flags);

/* Whether s needs quotes to read as one word: a space or anything escaped. */
bool esc_needs_quotes(const char *s, size_t len);

#endif
