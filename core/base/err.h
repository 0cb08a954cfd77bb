/* SPDX-License-Identifier: MIT */
/* Error sentences: each is formatted into the buffer of the object that
 * failed (a session's), or into this thread's when there is none yet. */
#ifndef PR_BASE_ERR_H
#define PR_BASE_ERR_H

#include <stddef.h>

#define PR_ERR_LEN 512

struct pr_errbuf {
	char msg[PR_ERR_LEN];
	int busy; /* a writer is copying a sentence in */
};

/* Formats the sentence into e (NULL: this thread's buffer; a session's is
 * also copied there) and returns err: `return pr_err(e, -EINVAL, "...")`.
 * An -EMFILE or -ENFILE sentence gets the limit's name appended (R10,
 * docs/RULES.md). */
int pr_err(struct pr_errbuf *e, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Formats a short reason into a caller's buffer (none when buf is NULL or
 * len 0), for a leaf that knows no session. */
void pr_reason(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* This thread's last sentence. */
const char *pr_err_thread(void);

/* -EINVAL with "FN: ARG must not be NULL" as the sentence. */
int pr_null(struct pr_errbuf *e, const char *fn, const char *arg);

/* Copies a caller's versioned opts struct (first field size_t sz) into dst
 * (dst_sz bytes, zeroed first; src NULL = defaults). An older one, of at
 * least min_sz bytes (the struct's first published size) and a multiple of
 * 8, fills its fields and leaves the newer ones zero; any other smaller sz
 * is -EINVAL; a larger one with a non-zero tail -E2BIG, as libbpf does. */
int pr_opts_copy(struct pr_errbuf *e, const char *name, void *dst, size_t dst_sz,
		 size_t min_sz, const void *src);

/* The fix for a failed syscall, appended to a sentence: "; run as root, ..." */
void pr_err_hint(char *buf, size_t len, int err, const char *syscall_name);

struct perf_event_attr;

/* The fix for a failed call on an event (perf_event_open, or an ioctl of
 * its fd): attr a, named what, for pid (>0: that process; else every task).
 * Names the cause that applies (R10): for EACCES/EPERM the kernel-samples,
 * ptrace and tracepoint rules; for EINVAL the attr field; else pr_err_hint. */
void pr_err_hint_attr(char *buf, size_t len, int err, const char *call,
		      const struct perf_event_attr *a, const char *what, int pid);

#endif
