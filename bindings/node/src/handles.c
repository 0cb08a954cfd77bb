/* SPDX-License-Identifier: MIT */
/* The handles an attach added to the loop: the loop's handles after it that
 * were not there before. The adapter's handles are private to it, and this
 * is how unref() reaches them with libuv's public API alone. */
#include "pn.h"

#include <errno.h>
#include <stdlib.h>

struct set {
	uv_handle_t **h;
	size_t n, cap;
	int err;
};

static void add(uv_handle_t *h, void *arg)
{
	struct set *s = arg;
	uv_handle_t **grown;

	if (s->err)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if (!(grown = realloc(s->h, s->cap * sizeof(*s->h)))) {
			s->err = -ENOMEM;
			return;
		}
		s->h = grown;
	}
	s->h[s->n++] = h;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(uv_handle_t *const *)a, y = (uintptr_t)*(uv_handle_t *const *)b;

	return x < y ? -1 : x > y;
}

int pn_handles_before(uv_loop_t *loop, uv_handle_t ***set, size_t *n)
{
	struct set s = { 0 };

	uv_walk(loop, add, &s);
	if (s.err) {
		free(s.h);
		return s.err;
	}
	if (s.n)
		qsort(s.h, s.n, sizeof(*s.h), cmp);
	*set = s.h;
	*n = s.n;
	return 0;
}

int pn_handles_new(uv_loop_t *loop, uv_handle_t **before, size_t before_n,
		   uv_handle_t ***out, size_t *n)
{
	struct set s = { 0 };
	size_t i, k = 0;

	uv_walk(loop, add, &s);
	if (s.err) {
		free(s.h);
		return s.err;
	}
	for (i = 0; i < s.n; i++)
		if (!before_n || !bsearch(&s.h[i], before, before_n, sizeof(*before), cmp))
			s.h[k++] = s.h[i];
	*out = s.h;
	*n = k;
	return 0;
}
