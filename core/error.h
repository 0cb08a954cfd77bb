/* SPDX-License-Identifier: MIT */
/* The last-error sentence of a session (or of this thread, before one exists). */
#ifndef PR_ERROR_H
#define PR_ERROR_H

#include <stddef.h>

struct perfring_session;

#define PR_ERR_LEN 512

/* Formats the sentence into s's buffer (or this thread's when s is NULL) and
 * returns err, so callers can `return pr_err(s, -EINVAL, "...")`. */
int pr_err(struct perfring_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Formats a reason into a caller's buffer (none when buf is NULL or len 0). */
void pr_errbuf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* -EINVAL with "FN: ARG must not be NULL" as the sentence. */
int pr_null(struct perfring_session *s, const char *fn, const char *arg);

/* Copies a caller's versioned opts struct (first field size_t sz) into dst
 * (dst_sz bytes, zeroed first; src NULL = defaults). Too small: -EINVAL;
 * larger with a non-zero tail: -E2BIG, as libbpf does. */
int pr_opts_copy(struct perfring_session *s, const char *name, void *dst, size_t dst_sz,
		 const void *src);

/* The fix for a failed syscall, appended to a sentence: "; run as root, ..." */
void pr_err_hint(char *buf, size_t len, int err, const char *syscall_name);

#endif
