/* SPDX-License-Identifier: MIT */
/* tracefs: where it is, a tracepoint's id, and its format file's fields. */
#ifndef PR_TRACEFS_H
#define PR_TRACEFS_H

#include <perfring/perfring.h>
#include <stddef.h>
#include <stdint.h>

struct pr_tp_format {
	uint32_t id;
	size_t nfields;
	struct perfring_field *fields; /* name/type strings owned here */
};

/* Finds tracefs: $PERFRING_TRACEFS if set (must hold "events"), else
 * /sys/kernel/tracing, /sys/kernel/debug/tracing, then a tracefs line in
 * /proc/mounts. Writes the root into buf. 0, -ENODEV if none, -EACCES/-EPERM
 * if one exists but is not readable by us, -ENAMETOOLONG. */
int pr_tracefs_root(char *buf, size_t len);

/* Parses a format file's text (len bytes, not necessarily NUL-terminated):
 * the "ID:" line and each "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:X;"
 * line (common_* fields too). Fills kind flags (ARRAY, DATA_LOC, REL_LOC,
 * STRING, SIGNED) and elem_size. Rejects, with -EINVAL and a short reason in
 * err, anything malformed: missing ID, offset+size overflow, fields too many
 * (> 1024), names too long (> 255). -ENOMEM. On error *out is left empty. */
int pr_format_parse(const char *text, size_t len, struct pr_tp_format *out,
		    char *err, size_t errlen);
void pr_format_free(struct pr_tp_format *f);

/* Reads events/<system>/<name>/format under root and parses it. system and
 * name must be plain names (no '/', not "." or ".."): else -EINVAL.
 * -ENOENT for a missing tracepoint. */
int pr_tracefs_load(const char *root, const char *system, const char *name,
		    struct pr_tp_format *out, char *err, size_t errlen);

const struct perfring_field *pr_format_field(const struct pr_tp_format *f, const char *name);

#endif
