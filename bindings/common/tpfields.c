/* SPDX-License-Identifier: MIT */
/* Which fields a tracepoint has: the public API looks a field up by name but
 * cannot list them, so the names come from the tracepoint's tracefs format
 * file (read bounded, parsed defensively). Shared by the Node addon and the
 * Python module, which each look every name up with perfring_event_field(). */
#include "tpfields.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORMAT_MAX (256 * 1024)

/* The whole file, NUL-terminated, or -errno (-EFBIG past FORMAT_MAX). */
static int read_all(const char *path, char **out)
{
	size_t n = 0, cap = 4096;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	char *buf, *grown;
	ssize_t r;

	if (fd < 0)
		return -errno;
	if (!(buf = malloc(cap + 1))) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			grown = cap < FORMAT_MAX ? realloc(buf, cap * 2 + 1) : NULL;
			if (!grown) {
				err = cap < FORMAT_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			buf = grown;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

static int format_at(const char *root, const char *system, const char *name, char **out)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, system, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return read_all(path, out);
}

/* The format file of system:name, found as the core finds tracefs:
 * PERFRING_TRACEFS, else the two usual mounts, else /proc/mounts. */
static int format_text(const char *system, const char *name, char **out)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *env = secure_getenv("PERFRING_TRACEFS");
	char root[4096], type[16], *line = NULL;
	size_t i, cap = 0;
	int err = -ENODEV;
	FILE *m;

	if (env)
		return format_at(env, system, name, out);
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!(err = format_at(roots[i], system, name, out)))
			return 0;
	if (!(m = fopen("/proc/mounts", "re")))
		return err;
	while (err && getline(&line, &cap, m) > 0)
		if (sscanf(line, "%*s %4095s %15s", root, type) == 2 && !strcmp(type, "tracefs"))
			err = format_at(root, system, name, out);
	free(line);
	fclose(m);
	return err;
}

/* The name in a declaration "TYPE NAME", "TYPE NAME[N]" or
 * "__data_loc TYPE[] NAME", copied into buf; false if there is none. */
static bool decl_name(const char *decl, size_t len, char *buf, size_t buflen)
{
	size_t end = len, start;

	while (end && isspace((unsigned char)decl[end - 1]))
		end--;
	if (end && decl[end - 1] == ']')
		while (end && decl[end - 1] != '[')
			end--;
	if (end && decl[end - 1] == '[')
		end--;
	start = end;
	while (start && (isalnum((unsigned char)decl[start - 1]) || decl[start - 1] == '_'))
		start--;
	if (start == end || end - start >= buflen)
		return false;
	memcpy(buf, decl + start, end - start);
	buf[end - start] = '\0';
	return true;
}

int pr_tp_fields(const char *system, const char *name,
		 int (*each)(void *ctx, const char *field), void *ctx)
{
	char *text, *p, *semi, field[128];
	int err;

	if ((err = format_text(system, name, &text)))
		return err;
	for (p = text; (p = strstr(p, "field:")); p = semi + 1) {
		p += strlen("field:");
		if (!(semi = strchr(p, ';')))
			break;
		if (memchr(p, '\n', (size_t)(semi - p)))
			continue;
		if (decl_name(p, (size_t)(semi - p), field, sizeof(field)) &&
		    strncmp(field, "common_", 7) && (err = each(ctx, field)))
			break;
	}
	free(text);
	return err;
}
