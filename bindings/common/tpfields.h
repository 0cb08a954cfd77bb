/* SPDX-License-Identifier: MIT */
#ifndef PR_BINDINGS_TPFIELDS_H
#define PR_BINDINGS_TPFIELDS_H


/* Calls each(ctx, name) for every field of tracepoint system:name but the
 * common ones (common_pid, ...), in the format file's order; stops at the
 * first non-zero return and returns it. The format file is found as the
 * core finds tracefs (PERFRING_TRACEFS, the usual mounts, /proc/mounts).
 * 0 or -errno (-EFBIG for a format file past 256 KiB). */
int pr_tp_fields(const char *system, const char *name,
		 int (*each)(void *ctx, const char *field), void *ctx);

#endif
