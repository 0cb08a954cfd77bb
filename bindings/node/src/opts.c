/* SPDX-License-Identifier: MIT */
/* perfring.watch()'s options object, read and checked. Every problem throws
 * an Error with code EINVAL naming the option; nothing is trusted. */
#include "pn.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 64
#define MAX_EVENT_NAME 256
#define MAX_CPUS 4096

#define MAX_ARGS 4096
#define MAX_ARG (128 * 1024)       /* Linux's MAX_ARG_STRLEN */
#define MAX_ORDER_WINDOW_MS 60000

static const char *const known[] = { "events", "pid", "cpus", "watermark", "flushMs", "pages",
				     "command", "orderWindowMs" };

/* -EINVAL, with an Error thrown (or the getter's own exception pending). */
static int bad(napi_env env, const char *what)
{
	return pn_einval(env, "perfring.watch: %s", what);
}

static int check_keys(napi_env env, napi_value obj)
{
	napi_value keys, k;
	uint32_t n, i;
	char name[32];
	size_t len, j;

	if (napi_get_property_names(env, obj, &keys) != napi_ok ||
	    napi_get_array_length(env, keys, &n) != napi_ok)
		return bad(env, "options must be a plain object");
	for (i = 0; i < n; i++) {
		if (napi_get_element(env, keys, i, &k) != napi_ok ||
		    napi_get_value_string_utf8(env, k, name, sizeof(name), &len) != napi_ok)
			return bad(env, "options must have string keys");
		for (j = 0; j < sizeof(known) / sizeof(known[0]); j++)
			if (!strcmp(name, known[j]))
				break;
		if (j == sizeof(known) / sizeof(known[0]))
			return pn_einval(env, "perfring.watch: unknown option '%s' (known: events, "
					 "pid, cpus, watermark, flushMs, pages, command, "
					 "orderWindowMs)", name);
	}
	return 0;
}

/* The property `key`, or NULL when it is undefined or absent. */
static int get(napi_env env, napi_value obj, const char *key, napi_value *out)
{
	napi_valuetype t;

	*out = NULL;
	if (napi_get_named_property(env, obj, key, out) != napi_ok ||
	    napi_typeof(env, *out, &t) != napi_ok)
		return bad(env, "options could not be read");
	if (t == napi_undefined)
		*out = NULL;
	return 0;
}

/* An integer number in [lo, hi]. */
static int int_of(napi_env env, napi_value v, const char *key, double lo, double hi, double *out)
{
	napi_valuetype t;

	if (napi_typeof(env, v, &t) != napi_ok || t != napi_number ||
	    napi_get_value_double(env, v, out) != napi_ok || !isfinite(*out) ||
	    *out != floor(*out) || *out < lo || *out > hi)
		return pn_einval(env, "perfring.watch: option '%s' must be an integer "
				 "from %.0f to %.0f", key, lo, hi);
	return 0;
}

static int uint_opt(napi_env env, napi_value obj, const char *key, double lo, double hi,
		    uint32_t *out, bool *set)
{
	napi_value v;
	double d;
	int err;

	if ((err = get(env, obj, key, &v)) || !v)
		return err;
	if ((err = int_of(env, v, key, lo, hi, &d)))
		return err;
	*out = (uint32_t)d;
	if (set)
		*set = true;
	return 0;
}

/* An array of 1 to max entries: its length. */
static int array_of(napi_env env, napi_value v, const char *key, uint32_t max, uint32_t *n)
{
	bool is = false;

	if (napi_is_array(env, v, &is) != napi_ok || !is ||
	    napi_get_array_length(env, v, n) != napi_ok || !*n || *n > max)
		return pn_einval(env, "perfring.watch: option '%s' must be an array "
				 "of 1 to %u entries", key, max);
	return 0;
}

static int read_event(napi_env env, napi_value arr, uint32_t i, char **out)
{
	char buf[MAX_EVENT_NAME];
	napi_value v;
	size_t len;

	if (napi_get_element(env, arr, i, &v) != napi_ok ||
	    napi_get_value_string_utf8(env, v, buf, sizeof(buf), &len) != napi_ok ||
	    len == 0 || len >= sizeof(buf) - 1 || strlen(buf) != len)
		return bad(env, "each of 'events' must be a non-empty string such as "
			   "'syscalls:sys_enter_getpid' or 'page-faults'");
	if (!(*out = strdup(buf)))
		return pn_enomem(env);
	return 0;
}

static int events_opt(napi_env env, napi_value obj, struct pn_opts *o)
{
	napi_value v;
	uint32_t n, i;
	int err;

	if ((err = get(env, obj, "events", &v)))
		return err;
	if (!v)
		return bad(env, "option 'events' is required, e.g. ['syscalls:sys_enter_getpid']");
	if ((err = array_of(env, v, "events", MAX_EVENTS, &n)))
		return err;
	if (!(o->events = calloc(n, sizeof(*o->events))))
		return pn_enomem(env);
	for (i = 0; i < n; i++, o->event_n++)
		if ((err = read_event(env, v, i, &o->events[i])))
			return err;
	return 0;
}

static int cpus_opt(napi_env env, napi_value obj, struct pn_opts *o)
{
	napi_value v, e;
	uint32_t n, i;
	double d;
	int err;

	if ((err = get(env, obj, "cpus", &v)) || !v)
		return err;
	if ((err = array_of(env, v, "cpus", MAX_CPUS, &n)))
		return err;
	if (!(o->cpus = calloc(n, sizeof(*o->cpus))))
		return pn_enomem(env);
	for (i = 0; i < n; i++) {
		if (napi_get_element(env, v, i, &e) != napi_ok)
			return bad(env, "option 'cpus' could not be read");
		if ((err = int_of(env, e, "cpus[]", 0, MAX_CPUS - 1, &d)))
			return err;
		o->cpus[o->cpu_n++] = (int)d;
	}
	return 0;
}

/* One argument of `command`: a string without NUL bytes (argv[0] also
 * non-empty), copied. */
static int read_arg(napi_env env, napi_value arr, uint32_t i, char **out)
{
	napi_valuetype t = napi_undefined;
	napi_value v;
	size_t len = 0;

	if (napi_get_element(env, arr, i, &v) != napi_ok || napi_typeof(env, v, &t) != napi_ok ||
	    t != napi_string || napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok ||
	    len >= MAX_ARG || (i == 0 && len == 0))
		goto bad;
	if (!(*out = malloc(len + 1)))
		return pn_enomem(env);
	if (napi_get_value_string_utf8(env, v, *out, len + 1, &len) != napi_ok ||
	    strlen(*out) != len)
		goto bad;
	return 0;
bad:
	return pn_einval(env, "perfring.watch: option 'command' must be an array of strings "
			 "without NUL bytes, the program first and not empty, e.g. ['ls', '-l'] "
			 "(entry %u is not)", i);
}

static int command_opt(napi_env env, napi_value obj, struct pn_opts *o)
{
	napi_value v;
	uint32_t n, i;
	int err;

	if ((err = get(env, obj, "command", &v)) || !v)
		return err;
	if ((err = array_of(env, v, "command", MAX_ARGS, &n)))
		return err;
	if (!(o->command = calloc((size_t)n + 1, sizeof(*o->command))))
		return pn_enomem(env);
	for (i = 0; i < n; i++, o->command_n++)
		if ((err = read_arg(env, v, i, &o->command[i])))
			return err;
	return 0;
}

/* orderWindowMs: a number of ms (fractions too) from 0 to 60 s, in ns. */
static int order_window_opt(napi_env env, napi_value obj, struct pn_opts *o)
{
	napi_valuetype t;
	napi_value v;
	double d;
	int err;

	if ((err = get(env, obj, "orderWindowMs", &v)) || !v)
		return err;
	if (napi_typeof(env, v, &t) != napi_ok || t != napi_number ||
	    napi_get_value_double(env, v, &d) != napi_ok || !isfinite(d) || d < 0 ||
	    d > MAX_ORDER_WINDOW_MS)
		return pn_einval(env, "perfring.watch: option 'orderWindowMs' must be a number "
				 "from 0 to %d (ms; 0 = no order across CPUs)", MAX_ORDER_WINDOW_MS);
	o->order_window_ns = (uint64_t)llround(d * 1e6);
	return 0;
}

int pn_opts_read(napi_env env, napi_value obj, struct pn_opts *o)
{
	uint32_t pid = 0;
	napi_valuetype t;
	int err;

	memset(o, 0, sizeof(*o));
	if (napi_typeof(env, obj, &t) != napi_ok || t != napi_object)
		return bad(env, "the first argument must be an options object");
	if ((err = check_keys(env, obj)) || (err = events_opt(env, obj, o)) ||
	    (err = cpus_opt(env, obj, o)) ||
	    (err = uint_opt(env, obj, "pid", 0, INT32_MAX, &pid, NULL)) ||
	    (err = uint_opt(env, obj, "watermark", 0, UINT32_MAX - 1, &o->watermark,
			    &o->watermark_set)) ||
	    (err = uint_opt(env, obj, "flushMs", 1, 86400000, &o->flush_ms, NULL)) ||
	    (err = uint_opt(env, obj, "pages", 1, 1u << 20, &o->pages, NULL)) ||
	    (err = command_opt(env, obj, o)) || (err = order_window_opt(env, obj, o)))
		return err;
	o->pid = (int)pid;
	if (o->command && pid)
		return bad(env, "options 'command' and 'pid' exclude each other: the watch's pid "
			   "is the command's");
	return 0;
}

void pn_opts_free(struct pn_opts *o)
{
	size_t i;

	for (i = 0; i < o->event_n; i++)
		free(o->events[i]);
	free(o->events);
	for (i = 0; i < o->command_n; i++)
		free(o->command[i]);
	free(o->command);
	free(o->cpus);
	memset(o, 0, sizeof(*o));
}
