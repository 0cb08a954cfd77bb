/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sys.h"
#include "kernel/tracefs.h"

#define REAL_ROOT "/sys/kernel/tracing"

/* --------------------------------------------------------------- helpers */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap + 1);
			cr_assert_not_null(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* tests/data/formats/<name>: under $top_srcdir or $srcdir when the harness
 * sets them (VPATH builds), else relative to the working directory. */
static char *data_file(const char *name, size_t *len)
{
	static const char *const envs[] = { "top_srcdir", "srcdir" };
	static const char *const dirs[] = { "tests/data/formats", "data/formats",
					    "../tests/data/formats" };
	const char *top;
	char path[PATH_MAX];
	char *text;
	size_t i;

	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		top = getenv(envs[i]);
		if (!top)
			continue;
		snprintf(path, sizeof(path), "%s/tests/data/formats/%s", top, name);
		text = slurp(path, len);
		if (text)
			return text;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		text = slurp(path, len);
		if (text)
			return text;
	}
	cr_assert_fail("test data %s not found (set top_srcdir)", name);
	return NULL;
}

/* Parses len bytes from an exact-size heap copy, so that any read past len
 * is an out-of-bounds read under ASan. */
static int parse_exact(const void *text, size_t len, struct pr_tp_format *f, char *err,
		       size_t errlen)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	cr_assert_not_null(copy);
	memcpy(copy, text, len);
	rc = pr_format_parse(copy, len, f, err, errlen);
	free(copy);
	return rc;
}

static int parse_str(const char *text, struct pr_tp_format *f, char *err, size_t errlen)
{
	return parse_exact(text, strlen(text), f, err, errlen);
}

static void parse_data(const char *name, struct pr_tp_format *f)
{
	char err[256] = "";
	size_t len;
	char *text = data_file(name, &len);

	cr_assert_eq(parse_exact(text, len, f, err, sizeof(err)), 0, "%s: %s", name, err);
	free(text);
}

static void expect_empty(const struct pr_tp_format *f)
{
	cr_expect_eq(f->nfields, 0);
	cr_expect_null(f->fields);
	cr_expect_eq(f->id, 0);
}

/* The text must be rejected with a reason; `why` is a part of it we can
 * predict from the input (e.g. the line number), or NULL. */
static void expect_reject(const void *text, size_t len, const char *why)
{
	struct pr_tp_format f = { .nfields = 7 };
	char err[256] = "";
	int rc = parse_exact(text, len, &f, err, sizeof(err));

	cr_expect_eq(rc, -EINVAL, "accepted (rc %d): %.*s", rc, (int)len, (const char *)text);
	cr_expect_neq(err[0], '\0', "no reason given");
	if (why)
		cr_expect_not_null(strstr(err, why), "reason \"%s\" lacks \"%s\"", err, why);
	expect_empty(&f);
	pr_format_free(&f);
}

static void expect_reject_str(const char *text, const char *why)
{
	expect_reject(text, strlen(text), why);
}

static void expect_reject_file(const char *name, const char *why)
{
	size_t len;
	char *text = data_file(name, &len);

	expect_reject(text, len, why);
	free(text);
}

static const struct perfring_field *field(const struct pr_tp_format *f, const char *name)
{
	const struct perfring_field *x = pr_format_field(f, name);

	cr_assert_not_null(x, "no field %s", name);
	return x;
}

/* Reads a real format file; skips the test when tracefs is not readable. */
static char *real_format(const char *system, const char *name, size_t *len)
{
	char path[PATH_MAX];
	char *text;

	snprintf(path, sizeof(path), REAL_ROOT "/events/%s/%s/format", system, name);
	text = slurp(path, len);
	if (!text)
		cr_skip_test("%s not readable", path);
	return text;
}

/* The numbers of a field's line, read by the test itself from the text. */
struct line_nums {
	unsigned int offset, size;
	int sign;
};

static struct line_nums text_field(const char *text, const char *name)
{
	char pat[128];
	const char *hit, *attrs;
	struct line_nums n;

	snprintf(pat, sizeof(pat), " %s;", name);
	hit = strstr(text, pat);
	if (!hit) {
		snprintf(pat, sizeof(pat), " %s[", name);
		hit = strstr(text, pat);
	}
	cr_assert_not_null(hit, "field %s not in the text", name);
	attrs = strstr(hit, "offset:");
	cr_assert_not_null(attrs);
	cr_assert_eq(sscanf(attrs, "offset:%u;\tsize:%u;\tsigned:%d;", &n.offset, &n.size,
			    &n.sign), 3);
	return n;
}

static unsigned int text_id(const char *text)
{
	const char *id = strstr(text, "\nID: ");
	unsigned int v;

	cr_assert_not_null(id);
	cr_assert_eq(sscanf(id, "\nID: %u", &v), 1);
	return v;
}

static size_t count_substr(const char *text, const char *pat)
{
	size_t n = 0;

	for (text = strstr(text, pat); text; text = strstr(text + 1, pat))
		n++;
	return n;
}

static void expect_line(const struct pr_tp_format *f, const char *text, const char *name)
{
	const struct perfring_field *x = field(f, name);
	struct line_nums n = text_field(text, name);

	cr_expect_eq(x->offset, n.offset, "%s offset", name);
	cr_expect_eq(x->size, n.size, "%s size", name);
	cr_expect_eq(!!(x->flags & PERFRING_FIELD_SIGNED), n.sign, "%s signed", name);
}

/* ---------------------------------------------------- real tracefs files */

Test(tracefs_real, sched_switch)
{
	struct pr_tp_format f;
	char err[256] = "";
	size_t len;
	char *text = real_format("sched", "sched_switch", &len);
	const struct perfring_field *comm;

	cr_assert_eq(pr_tracefs_load(REAL_ROOT, "sched", "sched_switch", &f, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(f.id, text_id(text));
	cr_expect_eq(f.nfields, count_substr(text, "\tfield:"));
	expect_line(&f, text, "next_pid");
	expect_line(&f, text, "common_pid");
	expect_line(&f, text, "prev_state");
	expect_line(&f, text, "next_comm");
	cr_expect_str_eq(field(&f, "next_pid")->type, "pid_t");
	cr_expect_eq(field(&f, "next_pid")->elem_size, field(&f, "next_pid")->size);
	comm = field(&f, "prev_comm");
	cr_expect_eq(comm->flags & ~PERFRING_FIELD_SIGNED,
		     PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING);
	cr_expect_eq(comm->elem_size, 1);
	cr_expect_eq(comm->size, text_field(text, "prev_comm").size);
	pr_format_free(&f);
	free(text);
}

Test(tracefs_real, sched_process_exec_filename)
{
	struct pr_tp_format f;
	char err[256] = "";
	size_t len;
	char *text = real_format("sched", "sched_process_exec", &len);
	const struct perfring_field *fn;

	cr_assert_eq(pr_tracefs_load(REAL_ROOT, "sched", "sched_process_exec", &f, err,
				     sizeof(err)), 0, "%s", err);
	fn = field(&f, "filename");
	cr_expect_eq(fn->flags, PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_STRING);
	cr_expect_eq(fn->size, 4);
	cr_expect_eq(fn->elem_size, 1);
	cr_expect_str_eq(fn->type, "__data_loc char[]");
	expect_line(&f, text, "filename");
	expect_line(&f, text, "old_pid");
	pr_format_free(&f);
	free(text);
}

Test(tracefs_real, sys_enter_write)
{
	struct pr_tp_format f;
	char err[256] = "";
	size_t len;
	char *text = real_format("syscalls", "sys_enter_write", &len);

	cr_assert_eq(pr_format_parse(text, len, &f, err, sizeof(err)), 0, "%s", err);
	expect_line(&f, text, "fd");
	expect_line(&f, text, "count");
	cr_expect_str_eq(field(&f, "buf")->type, "const char *");
	cr_expect_eq(field(&f, "buf")->flags & PERFRING_FIELD_STRING, 0,
		     "a char pointer is not a string in the payload");
	pr_format_free(&f);
	free(text);
}

/* Every format file this kernel has must parse, with sane shapes. */
Test(tracefs_real, every_format_file_parses)
{
	struct pr_tp_format f;
	char err[256];
	size_t i, j, len, n = 0;
	glob_t g;
	char *text;

	if (glob(REAL_ROOT "/events/*/*/format", 0, NULL, &g) != 0)
		cr_skip_test("no readable tracefs");
	for (i = 0; i < g.gl_pathc; i++) {
		text = slurp(g.gl_pathv[i], &len);
		if (!text)
			continue;
		err[0] = '\0';
		cr_expect_eq(pr_format_parse(text, len, &f, err, sizeof(err)), 0, "%s: %s",
			     g.gl_pathv[i], err);
		cr_expect_eq(f.nfields, count_substr(text, "\tfield:"), "%s", g.gl_pathv[i]);
		cr_expect_eq(f.id, text_id(text), "%s", g.gl_pathv[i]);
		for (j = 0; j < f.nfields; j++) {
			const struct perfring_field *x = &f.fields[j];

			cr_expect_gt(x->elem_size, 0, "%s %s", g.gl_pathv[i], x->name);
			if (x->flags & (PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_REL_LOC))
				cr_expect_eq(x->size, 4, "%s %s", g.gl_pathv[i], x->name);
			else if (x->elem_size)
				cr_expect_eq(x->size % x->elem_size, 0, "%s %s",
					     g.gl_pathv[i], x->name);
		}
		n++;
		pr_format_free(&f);
		free(text);
	}
	globfree(&g);
	cr_expect_gt(n, 100, "only %zu format files read", n);
}

Test(tracefs_real, default_root)
{
	char root[PATH_MAX];
	struct stat st;

	unsetenv("PERFRING_TRACEFS");
	if (stat(REAL_ROOT "/events", &st) != 0)
		cr_skip_test(REAL_ROOT " is not accessible");
	cr_assert_eq(pr_tracefs_root(root, sizeof(root)), 0);
	cr_expect_str_eq(root, REAL_ROOT);
	cr_expect_eq(pr_tracefs_root(root, sizeof(REAL_ROOT) - 1), -ENAMETOOLONG);
	cr_expect_eq(pr_tracefs_root(root, sizeof(REAL_ROOT)), 0);
}

Test(tracefs_real, empty_override_is_unset)
{
	char root[PATH_MAX];
	struct stat st;

	if (stat(REAL_ROOT "/events", &st) != 0)
		cr_skip_test(REAL_ROOT " is not accessible");
	setenv("PERFRING_TRACEFS", "", 1);
	cr_assert_eq(pr_tracefs_root(root, sizeof(root)), 0);
	cr_expect_str_eq(root, REAL_ROOT);
}

Test(tracefs_real, missing_tracepoints)
{
	struct pr_tp_format f;
	char err[256] = "";
	struct stat st;

	if (stat(REAL_ROOT "/events/sched", &st) != 0)
		cr_skip_test(REAL_ROOT " is not accessible");
	cr_expect_eq(pr_tracefs_load(REAL_ROOT, "sched", "no_such_event", &f, err, sizeof(err)),
		     -ENOENT);
	cr_expect_not_null(strstr(err, "no_such_event"), "err \"%s\" lacks the path", err);
	expect_empty(&f);
	cr_expect_eq(pr_tracefs_load(REAL_ROOT, "no_such_system", "x", &f, NULL, 0), -ENOENT);
	/* events/enable is a file, events/sched/enable too: not tracepoints */
	cr_expect_eq(pr_tracefs_load(REAL_ROOT, "enable", "x", &f, NULL, 0), -ENOENT);
	cr_expect_eq(pr_tracefs_load(REAL_ROOT, "sched", "enable", &f, NULL, 0), -ENOENT);
}

static int opens_seen;

static int fail_first_two_opens(enum pr_sys_call call, void *ctx)
{
	(void)ctx;
	if (call != PR_SYS_OPEN)
		return 0;
	return opens_seen++ < 2 ? ENOENT : 0;
}

static int fail_all_opens(enum pr_sys_call call, void *ctx)
{
	(void)ctx;
	return call == PR_SYS_OPEN ? ENOENT : 0;
}

/* With both well-known paths gone, the root comes from /proc/mounts. */
Test(tracefs_real, root_from_proc_mounts)
{
	FILE *m = setmntent("/proc/mounts", "r");
	struct mntent *e;
	char want[PATH_MAX] = "", root[PATH_MAX];
	struct stat st;
	int rc;

	cr_assert_not_null(m);
	while ((e = getmntent(m)))
		if (!strcmp(e->mnt_type, "tracefs")) {
			snprintf(want, sizeof(want), "%s", e->mnt_dir);
			break;
		}
	endmntent(m);
	if (!want[0])
		cr_skip_test("no tracefs in /proc/mounts");
	strncat(want, "/events", sizeof(want) - strlen(want) - 1);
	if (stat(want, &st) != 0)
		cr_skip_test("%s is not accessible", want);
	want[strlen(want) - strlen("/events")] = '\0';
	unsetenv("PERFRING_TRACEFS");
	opens_seen = 0;
	pr_fault_set(fail_first_two_opens, NULL);
	rc = pr_tracefs_root(root, sizeof(root));
	pr_fault_set(NULL, NULL);
	cr_assert_eq(rc, 0);
	cr_expect_str_eq(root, want);
	cr_expect_gt(opens_seen, 2, "/proc/mounts was not read");
}

Test(tracefs, root_arguments)
{
	char root[PATH_MAX];
	char *longpath = malloc(PATH_MAX + 16);

	cr_assert_not_null(longpath);
	cr_expect_eq(pr_tracefs_root(NULL, 10), -EINVAL);
	/* an override too long to hold "/events" is no tracefs */
	memset(longpath, 'a', PATH_MAX + 15);
	longpath[0] = '/';
	longpath[PATH_MAX + 15] = '\0';
	setenv("PERFRING_TRACEFS", longpath, 1);
	cr_expect_eq(pr_tracefs_root(root, sizeof(root)), -ENODEV);
	free(longpath);
}

Test(tracefs, load_path_too_long)
{
	struct pr_tp_format f;
	char err[64] = "";
	char *root = malloc(PATH_MAX);

	cr_assert_not_null(root);
	memset(root, 'r', PATH_MAX - 1);
	root[PATH_MAX - 1] = '\0';
	cr_expect_eq(pr_tracefs_load(root, "sched", "sched_switch", &f, err, sizeof(err)),
		     -ENAMETOOLONG);
	cr_expect_neq(err[0], '\0');
	expect_empty(&f);
	free(root);
}

Test(tracefs, no_root_at_all)
{
	char root[PATH_MAX];
	int rc;

	unsetenv("PERFRING_TRACEFS");
	pr_fault_set(fail_all_opens, NULL);
	rc = pr_tracefs_root(root, sizeof(root));
	pr_fault_set(NULL, NULL);
	cr_expect_eq(rc, -ENODEV);
}

/* ------------------------------------------------ PERFRING_TRACEFS tree */

static char tmp[] = "/tmp/perfring-tracefs-XXXXXX";

static void make_tmp(void)
{
	cr_assert_not_null(mkdtemp(tmp));
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void rm_tmp(void)
{
	struct stat st;

	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	cr_expect_neq(stat(tmp, &st), 0, "%s left behind", tmp);
}

/* Writes tmp/rel, making its directories. */
static void put_file(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	char *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (slash = strchr(path + strlen(tmp) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static void put_data_file(const char *rel, const char *name)
{
	size_t len;
	char *text = data_file(name, &len);

	put_file(rel, text, len);
	free(text);
}

TestSuite(tracefs_dir, .init = make_tmp, .fini = rm_tmp);

Test(tracefs_dir, empty_override_dir_is_enodev)
{
	char root[PATH_MAX];

	setenv("PERFRING_TRACEFS", tmp, 1);
	cr_expect_eq(pr_tracefs_root(root, sizeof(root)), -ENODEV);
	/* events as a plain file is no tracefs either */
	put_file("events", "x", 1);
	cr_expect_eq(pr_tracefs_root(root, sizeof(root)), -ENODEV);
}

Test(tracefs_dir, override_missing_dir_is_enodev)
{
	char root[PATH_MAX], gone[PATH_MAX];

	snprintf(gone, sizeof(gone), "%s/does-not-exist", tmp);
	setenv("PERFRING_TRACEFS", gone, 1);
	cr_expect_eq(pr_tracefs_root(root, sizeof(root)), -ENODEV);
}

Test(tracefs_dir, override_is_used_and_loads)
{
	char root[PATH_MAX], err[256] = "";
	struct pr_tp_format f;

	put_data_file("events/sched/sched_switch/format", "sched_switch.format");
	setenv("PERFRING_TRACEFS", tmp, 1);
	cr_assert_eq(pr_tracefs_root(root, sizeof(root)), 0);
	cr_expect_str_eq(root, tmp);
	cr_expect_eq(pr_tracefs_root(root, strlen(tmp)), -ENAMETOOLONG);
	cr_assert_eq(pr_tracefs_load(root, "sched", "sched_switch", &f, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(f.id, 372);
	cr_expect_eq(f.nfields, 11);
	pr_format_free(&f);
	cr_expect_eq(pr_tracefs_load(root, "sched", "sched_wakeup", &f, err, sizeof(err)),
		     -ENOENT);
	expect_empty(&f);
	cr_expect_eq(pr_tracefs_load(root, "irq", "sched_switch", &f, NULL, 0), -ENOENT);
}

Test(tracefs_dir, bad_names)
{
	static const char *const bad[] = { "", ".", "..", "a/b", "/", "../sched", "sched/" };
	struct pr_tp_format f = { .nfields = 3 };
	char err[64];
	size_t i;

	put_data_file("events/sched/sched_switch/format", "sched_switch.format");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_eq(pr_tracefs_load(tmp, bad[i], "sched_switch", &f, err, sizeof(err)),
			     -EINVAL, "system \"%s\"", bad[i]);
		cr_expect_neq(err[0], '\0');
		expect_empty(&f);
		cr_expect_eq(pr_tracefs_load(tmp, "sched", bad[i], &f, NULL, 0), -EINVAL,
			     "name \"%s\"", bad[i]);
	}
	cr_expect_eq(pr_tracefs_load(tmp, NULL, "x", &f, NULL, 0), -EINVAL);
	cr_expect_eq(pr_tracefs_load(tmp, "sched", NULL, &f, NULL, 0), -EINVAL);
	cr_expect_eq(pr_tracefs_load(NULL, "sched", "sched_switch", &f, NULL, 0), -EINVAL);
	/* names that merely contain dots are fine */
	put_data_file("events/a.b/..c/format", "sched_switch.format");
	cr_expect_eq(pr_tracefs_load(tmp, "a.b", "..c", &f, NULL, 0), 0);
	pr_format_free(&f);
}

Test(tracefs_dir, hostile_file_in_tree)
{
	struct pr_tp_format f;
	char err[256] = "";

	put_data_file("events/x/garbage/format", "garbage.bin");
	cr_expect_eq(pr_tracefs_load(tmp, "x", "garbage", &f, err, sizeof(err)), -EINVAL);
	cr_expect_neq(err[0], '\0');
	expect_empty(&f);
}

Test(tracefs_dir, oversized_format_file)
{
	struct pr_tp_format f;
	size_t len = 128 * 1024;
	char *big = malloc(len);

	cr_assert_not_null(big);
	memset(big, '\n', len);
	memcpy(big, "ID: 1\n", 6);
	put_file("events/x/big/format", big, len);
	free(big);
	cr_expect_eq(pr_tracefs_load(tmp, "x", "big", &f, NULL, 0), -EFBIG);
	expect_empty(&f);
}

static int fail_nth(enum pr_sys_call call, void *ctx)
{
	int *left = ctx;

	(void)call;
	return (*left)-- == 0 ? EIO : 0;
}

/* Each syscall or allocation of a load may fail; nothing leaks, nothing is
 * returned, and the error comes back. */
Test(tracefs_dir, load_fault_injection)
{
	struct pr_tp_format f;
	int nth, left, rc;

	put_data_file("events/sched/sched_switch/format", "sched_switch.format");
	for (nth = 0;; nth++) {
		left = nth;
		pr_fault_set(fail_nth, &left);
		rc = pr_tracefs_load(tmp, "sched", "sched_switch", &f, NULL, 0);
		pr_fault_set(NULL, NULL);
		if (rc == 0)
			break;
		cr_assert(rc == -EIO || rc == -ENOMEM, "failure %d gave %d", nth, rc);
		expect_empty(&f);
		cr_assert_lt(nth, 100);
	}
	cr_expect_geq(nth, 3, "open, read and allocations were not all tried");
	cr_expect_eq(f.nfields, 11);
	pr_format_free(&f);
}

/* ------------------------------------------------ synthetic format files */

Test(tracefs, stored_sched_switch)
{
	struct pr_tp_format f;
	const struct perfring_field *x;

	parse_data("sched_switch.format", &f);
	cr_expect_eq(f.id, 372);
	cr_assert_eq(f.nfields, 11);
	cr_expect_str_eq(f.fields[0].name, "common_type");
	cr_expect_str_eq(f.fields[0].type, "unsigned short");
	cr_expect_str_eq(f.fields[10].name, "next_prio");
	x = field(&f, "prev_comm");
	cr_expect_str_eq(x->type, "char[16]");
	cr_expect_eq(x->offset, 8);
	cr_expect_eq(x->size, 16);
	cr_expect_eq(x->elem_size, 1);
	cr_expect_eq(x->flags, PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING);
	x = field(&f, "prev_state");
	cr_expect_str_eq(x->type, "long");
	cr_expect_eq(x->offset, 32);
	cr_expect_eq(x->size, 8);
	cr_expect_eq(x->elem_size, 8);
	cr_expect_eq(x->flags, PERFRING_FIELD_SIGNED);
	x = field(&f, "common_flags");
	cr_expect_eq(x->flags, 0);
	cr_expect_eq(x->size, 1);
	pr_format_free(&f);
}

Test(tracefs, data_loc_arrays)
{
	struct pr_tp_format f;
	const struct perfring_field *x;

	parse_data("dma_map_sg.format", &f);
	x = field(&f, "phys_addrs");
	cr_expect_eq(x->flags, PERFRING_FIELD_DATA_LOC);
	cr_expect_eq(x->elem_size, 8);
	cr_expect_str_eq(x->type, "__data_loc u64[]");
	x = field(&f, "lengths");
	cr_expect_eq(x->flags, PERFRING_FIELD_DATA_LOC);
	cr_expect_eq(x->elem_size, 4);
	x = field(&f, "device");
	cr_expect_eq(x->flags, PERFRING_FIELD_DATA_LOC | PERFRING_FIELD_STRING);
	x = field(&f, "truncated");
	cr_expect_str_eq(x->type, "bool");
	cr_expect_eq(x->size, 1);
	x = field(&f, "dir");
	cr_expect_str_eq(x->type, "enum dma_data_direction");
	pr_format_free(&f);

	parse_data("ipi_send_cpumask.format", &f);
	x = field(&f, "cpumask");
	cr_expect_eq(x->flags, PERFRING_FIELD_DATA_LOC, "a bracketless locator type");
	cr_expect_str_eq(x->type, "__data_loc cpumask_t");
	cr_expect_str_eq(field(&f, "callsite")->type, "void *");
	pr_format_free(&f);
}

Test(tracefs, rel_loc)
{
	struct pr_tp_format f;
	const struct perfring_field *x;

	parse_data("rel_loc.format", &f);
	cr_expect_eq(f.id, 4242);
	x = field(&f, "msg");
	cr_expect_eq(x->flags, PERFRING_FIELD_REL_LOC | PERFRING_FIELD_STRING);
	cr_expect_eq(x->elem_size, 1);
	x = field(&f, "vals");
	cr_expect_eq(x->flags, PERFRING_FIELD_REL_LOC);
	cr_expect_eq(x->elem_size, 4);
	x = field(&f, "delta");
	cr_expect_eq(x->flags, PERFRING_FIELD_SIGNED);
	pr_format_free(&f);
}

Test(tracefs, flexible_array)
{
	struct pr_tp_format f;
	const struct perfring_field *x;

	parse_data("ftrace_print.format", &f);
	x = field(&f, "buf");
	cr_expect_eq(x->flags, PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING);
	cr_expect_eq(x->size, 0);
	cr_expect_eq(x->elem_size, 1);
	cr_expect_str_eq(x->type, "char[]");
	pr_format_free(&f);
}

Test(tracefs, crlf_and_no_trailing_newline)
{
	struct pr_tp_format f;

	parse_data("crlf.format", &f);
	cr_expect_eq(f.id, 77);
	cr_assert_eq(f.nfields, 1);
	cr_expect_str_eq(f.fields[0].name, "x");
	cr_expect_str_eq(f.fields[0].type, "int");
	pr_format_free(&f);
	parse_data("no_trailing_newline.format", &f);
	cr_expect_eq(f.id, 78);
	cr_expect_eq(f.nfields, 1);
	pr_format_free(&f);
}

Test(tracefs, array_element_sizes)
{
	struct pr_tp_format f;

	cr_assert_eq(parse_str("ID: 1\n"
			       "\tfield:u64 a[4];\toffset:0;\tsize:32;\tsigned:0;\n"
			       "\tfield:unsigned char mac[6];\toffset:32;\tsize:6;\tsigned:0;\n"
			       "\tfield:__u8 addr[16];\toffset:38;\tsize:16;\tsigned:0;\n"
			       "\tfield:int n[LEN];\toffset:56;\tsize:12;\tsigned:1;\n"
			       "\tfield:u32 tail[];\toffset:68;\tsize:0;\tsigned:0;\n"
			       "\tfield:struct foo s;\toffset:68;\tsize:24;\tsigned:0;\n",
			       &f, NULL, 0), 0);
	cr_expect_eq(field(&f, "a")->elem_size, 8);
	cr_expect_eq(field(&f, "a")->flags, PERFRING_FIELD_ARRAY);
	cr_expect_str_eq(field(&f, "a")->type, "u64[4]");
	cr_expect_eq(field(&f, "mac")->flags, PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING);
	cr_expect_eq(field(&f, "addr")->flags, PERFRING_FIELD_ARRAY, "u8 arrays are bytes");
	cr_expect_eq(field(&f, "n")->elem_size, 4, "a macro length: size from the type");
	cr_expect_eq(field(&f, "n")->flags, PERFRING_FIELD_ARRAY | PERFRING_FIELD_SIGNED);
	cr_expect_str_eq(field(&f, "n")->type, "int[LEN]");
	cr_expect_eq(field(&f, "tail")->elem_size, 4);
	cr_expect_str_eq(field(&f, "s")->type, "struct foo");
	cr_expect_eq(field(&f, "s")->elem_size, 24);
	cr_expect_eq(field(&f, "s")->flags, 0);
	pr_format_free(&f);
}

/* Element sizes the format does not state come from the type name. */
Test(tracefs, element_size_from_type)
{
	struct pr_tp_format f;

	cr_assert_eq(parse_str("ID: 1\n"
			       "\tfield:__data_loc void *[] ptrs;\toffset:0;\tsize:4;\tsigned:0;\n"
			       "\tfield:__data_loc const s16[] d;\toffset:4;\tsize:4;\tsigned:0;\n"
			       "\tfield:__data_loc struct x[] xs;\toffset:8;\tsize:4;\tsigned:0;\n"
			       "\tfield:u64 odd[N];\toffset:12;\tsize:12;\tsigned:0;\n"
			       "\tfield:unsigned long longs[];\toffset:24;\tsize:0;\tsigned:0;\n",
			       &f, NULL, 0), 0);
	cr_expect_eq(field(&f, "ptrs")->elem_size, sizeof(void *));
	cr_expect_eq(field(&f, "d")->elem_size, 2);
	cr_expect_eq(field(&f, "xs")->elem_size, 1, "unknown types count bytes");
	cr_expect_eq(field(&f, "odd")->elem_size, 1, "12 bytes are no whole u64s");
	cr_expect_eq(field(&f, "longs")->elem_size, sizeof(long));
	pr_format_free(&f);
}

Test(tracefs, qualified_and_pointer_types)
{
	struct pr_tp_format f;

	cr_assert_eq(parse_str("ID: 9\n"
			       "\tfield:const char *const * argv;\toffset:0;\tsize:8;\tsigned:0;\n"
			       "\tfield:void __seg_gs * p;\toffset:8;\tsize:8;\tsigned:0;\n"
			       "\tfield:const char name[8];\toffset:16;\tsize:8;\tsigned:0;\n"
			       "\tfield:unsigned long long v;\toffset:24;\tsize:8;\tsigned:0;\n",
			       &f, NULL, 0), 0);
	cr_expect_str_eq(field(&f, "argv")->type, "const char *const *");
	cr_expect_eq(field(&f, "argv")->flags, 0);
	cr_expect_str_eq(field(&f, "p")->type, "void __seg_gs *");
	cr_expect_eq(field(&f, "name")->flags, PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING);
	cr_expect_str_eq(field(&f, "v")->type, "unsigned long long");
	pr_format_free(&f);
}

Test(tracefs, extremes_that_fit)
{
	struct pr_tp_format f;

	cr_assert_eq(parse_str("ID: 4294967295\n"
			       "\tfield:int x;\toffset:4294967291;\tsize:4;\tsigned:1;\n"
			       "\tfield:char z[0];\toffset:0;\tsize:0;\tsigned:0;\n",
			       &f, NULL, 0), 0);
	cr_expect_eq(f.id, UINT32_MAX);
	cr_expect_eq(field(&f, "x")->offset, 4294967291u);
	pr_format_free(&f);
}

Test(tracefs, only_id)
{
	struct pr_tp_format f;

	cr_assert_eq(parse_str("ID: 3\n", &f, NULL, 0), 0);
	cr_expect_eq(f.id, 3);
	cr_expect_eq(f.nfields, 0);
	cr_expect_null(pr_format_field(&f, "common_pid"));
	pr_format_free(&f);
}

Test(tracefs, print_fmt_ends_parsing)
{
	static const char text[] = "ID: 1\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
				   "print fmt: \"\0\x01\xff\"\n\tfield:int a;\n garbage\n";
	struct pr_tp_format f;

	cr_assert_eq(parse_exact(text, sizeof(text) - 1, &f, NULL, 0), 0);
	cr_expect_eq(f.nfields, 1);
	pr_format_free(&f);
}

Test(tracefs, uses_len_not_nul)
{
	static const char text[] = "ID: 123\n\tfield:int abcdef;\toffset:0;\tsize:4;\tsigned:1;\n";
	const char *cut = strstr(text, "\tfield");
	struct pr_tp_format f;

	cr_assert_eq(parse_exact(text, 6, &f, NULL, 0), 0);
	cr_expect_eq(f.id, 12);
	pr_format_free(&f);
	/* cut inside the field line, the name, and the attributes */
	expect_reject(text, (size_t)(cut - text) + 10, "line 2");
	expect_reject(text, (size_t)(cut - text) + 13, "line 2");
	expect_reject(text, (size_t)(cut - text) + 20, "line 2");
	expect_reject(text, sizeof(text) - 3, "line 2");
}

Test(tracefs, field_lookup)
{
	struct pr_tp_format f;

	parse_data("sched_switch.format", &f);
	cr_expect_eq(pr_format_field(&f, "next_pid"), &f.fields[9]);
	cr_expect_null(pr_format_field(&f, "next_pi"));
	cr_expect_null(pr_format_field(&f, "next_pid "));
	cr_expect_null(pr_format_field(&f, ""));
	cr_expect_null(pr_format_field(&f, NULL));
	cr_expect_null(pr_format_field(NULL, "next_pid"));
	pr_format_free(&f);
	expect_empty(&f);
	pr_format_free(&f); /* twice is harmless */
	pr_format_free(NULL);
}

/* -------------------------------------------------------- hostile input */

Test(tracefs, hostile_files)
{
	expect_reject_file("missing_id.format", "ID");
	expect_reject_file("truncated.format", "line 9");
	expect_reject_file("huge_offset.format", "line 4");
	expect_reject_file("offset_size_overflow.format", "line 4");
	expect_reject_file("duplicate_field.format", NULL);
	expect_reject_file("locator_size.format", "line 4");
	expect_reject_file("array_mismatch.format", "line 4");
	expect_reject_file("bad_signed.format", "line 4");
	expect_reject_file("garbage.bin", "line 1");
	expect_reject_file("garbage_after_id.bin", "line 5");
}

Test(tracefs, hostile_field_lines)
{
	static const char *const bad[] = {
		"\tfield:int;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield: x;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int x;\toffset:;\tsize:4;\tsigned:1;",
		"\tfield:int x;\toffset:-1;\tsize:4;\tsigned:1;",
		"\tfield:int x;\toffset:0x10;\tsize:4;\tsigned:1;",
		"\tfield:int x;\toffset:0;\tsize:4;",
		"\tfield:int x;\toffset:0;\tsize:4;\tsigned:1",
		"\tfield:int x;\tsize:4;\toffset:0;\tsigned:1;",
		"\tfield:int x;\toffset:0;\tsize:4;\tsigned:1; junk",
		"\tfield:int x;\toffset:0;\tsize:4;\tsigned:10;",
		"\tfield:int x;\toffset:0;\tsize:4294967296;\tsigned:1;",
		"\tfield:int x;\toffset:1;\tsize:4294967295;\tsigned:1;",
		"\tfield:int x;\toffset:99999999999999999999999;\tsize:4;\tsigned:1;",
		"\tfield:int x",
		"\tfield:",
		"\tfield:int x[;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int x];\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int 9x;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int x[3];\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int x[4];\toffset:0;\tsize:0;\tsigned:1;",
		"\tfield:int x[99999999999];\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int x[2][2];\toffset:0;\tsize:16;\tsigned:1;",
		"\tfield:int x[a]b];\toffset:0;\tsize:16;\tsigned:1;",
		"\tfield:__data_loc x;\toffset:0;\tsize:4;\tsigned:0;",
		"\tfield:__rel_loc char[] s;\toffset:0;\tsize:2;\tsigned:0;",
		"\tfield:int\x01 x;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield:int\xc3\xa9 x;\toffset:0;\tsize:4;\tsigned:1;",
		"\tfield special:int x;\toffset:0;\tsize:4;\tsigned:1;",
		"some text",
		"ID: 2",
		"ID:",
	};
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "ID: 1\n%s\n", bad[i]);
		expect_reject_str(text, "line 2");
	}
}

Test(tracefs, hostile_ids)
{
	expect_reject_str("ID: \n", "line 1");
	expect_reject_str("ID: abc\n", "line 1");
	expect_reject_str("ID: 4294967296\n", "line 1");
	expect_reject_str("ID: -1\n", "line 1");
	expect_reject_str("ID: 1 2\n", "line 1");
	expect_reject_str("name: x\nID: 1\nID: 1\n", "line 3");
	expect_reject_str("", "ID");
	expect_reject_str("\n\n\n", "ID");
	expect_reject_str("name: x\nformat:\n", "ID");
	/* an ID after print fmt is not read */
	expect_reject_str("print fmt: \"\"\nID: 1\n", "ID");
}

Test(tracefs, embedded_nul)
{
	static const char a[] = "ID: 1\n\0\n";
	static const char b[] = "ID: 1\n\tfield:int a\0b;\toffset:0;\tsize:4;\tsigned:1;\n";
	static const char c[] = "ID: 1\0\n";

	expect_reject(a, sizeof(a) - 1, "line 2");
	expect_reject(b, sizeof(b) - 1, "line 2");
	expect_reject(c, sizeof(c) - 1, "line 1");
}

/* "ID: 1\n" and n fields f0..f(n-1) of 4 bytes each. */
static char *many_fields(size_t n, size_t *len)
{
	size_t cap = 16 + n * 64, i;
	char *text = malloc(cap);
	int w;

	cr_assert_not_null(text);
	*len = (size_t)snprintf(text, cap, "ID: 1\n");
	for (i = 0; i < n; i++) {
		w = snprintf(text + *len, cap - *len,
			     "\tfield:int f%zu;\toffset:%zu;\tsize:4;\tsigned:1;\n", i, i * 4);
		cr_assert_lt((size_t)w, cap - *len);
		*len += (size_t)w;
	}
	return text;
}

Test(tracefs, field_count_limit)
{
	struct pr_tp_format f;
	size_t len;
	char *text;

	text = many_fields(1024, &len);
	cr_assert_eq(parse_exact(text, len, &f, NULL, 0), 0);
	cr_expect_eq(f.nfields, 1024);
	cr_expect_eq(field(&f, "f1023")->offset, 1023 * 4);
	pr_format_free(&f);
	free(text);

	text = many_fields(1025, &len);
	expect_reject(text, len, "line 1026");
	free(text);
	text = many_fields(2000, &len);
	expect_reject(text, len, "line 1026");
	free(text);
}

static void long_decl(size_t type_len, size_t name_len, char *text, size_t cap)
{
	char type[600], name[600];

	cr_assert_lt(type_len, sizeof(type));
	cr_assert_lt(name_len, sizeof(name));
	memset(type, 't', type_len);
	type[type_len] = '\0';
	memset(name, 'n', name_len);
	name[name_len] = '\0';
	snprintf(text, cap, "ID: 1\n\tfield:%s %s;\toffset:0;\tsize:4;\tsigned:0;\n", type, name);
}

Test(tracefs, long_names)
{
	struct pr_tp_format f;
	char text[1400];

	long_decl(4, 255, text, sizeof(text));
	cr_assert_eq(parse_str(text, &f, NULL, 0), 0);
	cr_expect_eq(strlen(f.fields[0].name), 255);
	pr_format_free(&f);
	long_decl(4, 256, text, sizeof(text));
	expect_reject_str(text, "line 2");
	long_decl(4, 590, text, sizeof(text));
	expect_reject_str(text, "line 2");

	long_decl(255, 4, text, sizeof(text));
	cr_assert_eq(parse_str(text, &f, NULL, 0), 0);
	cr_expect_eq(strlen(f.fields[0].type), 255);
	pr_format_free(&f);
	long_decl(256, 4, text, sizeof(text));
	expect_reject_str(text, "line 2");
}

Test(tracefs, error_buffer_sizes)
{
	struct pr_tp_format f;
	char err[8];

	memset(err, 'z', sizeof(err));
	cr_expect_eq(parse_str("junk\n", &f, err, 4), -EINVAL);
	cr_expect_eq(err[3], '\0', "reason not cut to the buffer");
	cr_expect_eq(err[4], 'z', "wrote past errlen");
	cr_expect_eq(parse_str("junk\n", &f, NULL, 0), -EINVAL);
	cr_expect_eq(parse_str("junk\n", &f, err, 0), -EINVAL);
	cr_expect_eq(pr_format_parse(NULL, 5, &f, NULL, 0), -EINVAL);
	cr_expect_eq(pr_format_parse("ID: 1\n", 6, NULL, NULL, 0), -EINVAL);
}

static int fail_nth_alloc(enum pr_sys_call call, void *ctx)
{
	int *left = ctx;

	if (call != PR_SYS_MALLOC && call != PR_SYS_CALLOC && call != PR_SYS_REALLOC)
		return 0;
	return (*left)-- == 0 ? ENOMEM : 0;
}

Test(tracefs, allocation_failures)
{
	struct pr_tp_format f;
	char err[64];
	size_t len;
	char *text = many_fields(100, &len); /* enough to grow the field array */
	int nth, left, rc;

	for (nth = 0;; nth++) {
		left = nth;
		err[0] = '\0';
		pr_fault_set(fail_nth_alloc, &left);
		rc = pr_format_parse(text, len, &f, err, sizeof(err));
		pr_fault_set(NULL, NULL);
		if (rc == 0)
			break;
		cr_assert_eq(rc, -ENOMEM, "failure %d gave %d", nth, rc);
		cr_expect_not_null(strstr(err, "memory"), "err \"%s\"", err);
		expect_empty(&f);
		cr_assert_lt(nth, 100);
	}
	cr_expect_geq(nth, 2, "growth and the final copy were not both failed");
	cr_expect_eq(f.nfields, 100);
	pr_format_free(&f);
	free(text);
}
