/* SPDX-License-Identifier: MIT */
/* tracefs: where it is mounted, and reading a tracepoint's format file. */
#include "kernel/tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/sys.h"
#include "base/text.h"

#define FORMAT_FILE_MAX (64 * 1024)
#define MOUNTS_FILE_MAX (1024 * 1024)

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
	while (span_next_line(&rest, &line)) {
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
	int err, denied = 0;
	size_t i;

	if (!buf)
		return -EINVAL;
	if (env && *env)
		return has_events(env) ? copy_root(env, buf, len) : -ENODEV;

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
		pr_reason(err, errlen, "%s: %s", path, strerror(-rc));
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
		pr_reason(err, errlen, "bad tracepoint name");
		return -EINVAL;
	}
	n = snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, system, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		pr_reason(err, errlen, "tracepoint path too long");
		return -ENAMETOOLONG;
	}
	rc = read_format(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = pr_format_parse(text, len, out, err, errlen);
	free(text);
	return rc;
}
