/* SPDX-License-Identifier: MIT */
/* The module's functions as JavaScript sees them (index.js wraps them):
 * watch(opts, onSamples, onNotify) -> handle; close(handle) -> Promise;
 * stats(handle); ref(handle); unref(handle); fields(handle, batch, ev, off,
 * size); events(handle); layouts(handle); exited(handle); pid(handle); _diagnostics(handle). onSamples(batch, n) gets an
 * ArrayBuffer of n samples (pn_rec). */
#include "pn.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

/* Tells our handles from any other object, including other addons' wraps. */
static const napi_type_tag watch_tag = { 0x7065726672696e67ULL, 0x6e6f64652d776174ULL };

static napi_value undefined(napi_env env)
{
	napi_value v = NULL;

	napi_get_undefined(env, &v);
	return v;
}

static napi_value enomem(napi_env env)
{
	pn_enomem(env);
	return NULL;
}

static const char *type_name(napi_valuetype t)
{
	static const char *const name[] = {
		[napi_undefined] = "undefined", [napi_null] = "null", [napi_boolean] = "a boolean",
		[napi_number] = "a number", [napi_string] = "a string", [napi_symbol] = "a symbol",
		[napi_object] = "an object", [napi_function] = "a function",
		[napi_external] = "an external", [napi_bigint] = "a BigInt",
	};

	return (size_t)t < sizeof(name) / sizeof(name[0]) && name[t] ? name[t] : "of another type";
}

/* The watch behind the first argument; NULL after throwing. Only objects
 * reach the type tag check: on null or undefined V8's ToObject would throw a
 * TypeError of its own, without a code. No user code runs here, so anything
 * pending is V8's and gives way to our Error. */
static struct pn_watch *watch_arg(napi_env env, napi_callback_info info)
{
	napi_value argv[1], e;
	napi_valuetype t = napi_undefined;
	size_t argc = 1;
	bool ours = false, pending = false;
	void *w = NULL;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
	    napi_typeof(env, argv[0], &t) != napi_ok || t != napi_object ||
	    napi_check_object_type_tag(env, argv[0], &watch_tag, &ours) != napi_ok || !ours ||
	    napi_unwrap(env, argv[0], &w) != napi_ok || !w) {
		if (napi_is_exception_pending(env, &pending) == napi_ok && pending)
			napi_get_and_clear_last_exception(env, &e);
		pn_einval(env, "perfring: the argument is %s, not a watch handle "
			  "(perfring.watch() makes one)", argc < 1 ? "missing" : type_name(t));
		return NULL;
	}
	return w;
}

static bool is_function(napi_env env, napi_value v)
{
	napi_valuetype t;

	return napi_typeof(env, v, &t) == napi_ok && t == napi_function;
}

static void finalize(napi_env env, void *data, void *hint)
{
	pn_watch_unref(data);
}

static napi_value js_watch(napi_env env, napi_callback_info info)
{
	napi_value argv[3], handle;
	size_t argc = 3;
	struct pn_watch *w;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
	    !is_function(env, argv[1]) || !is_function(env, argv[2])) {
		pn_einval(env, "perfring.watch(options, callback): the callback must be a function");
		return NULL;
	}
	if (napi_create_object(env, &handle) != napi_ok)
		return enomem(env);
	if (!(w = pn_watch_new(env, argv[0], argv[1], argv[2])))
		return NULL;
	w->refs++;
	if (napi_wrap(env, handle, w, finalize, NULL, NULL) != napi_ok) {
		w->refs--;
		pn_watch_close(w);
		return enomem(env);
	}
	napi_type_tag_object(env, handle, &watch_tag);
	return handle;
}

static napi_value resolved(napi_env env)
{
	napi_deferred d;
	napi_value p;

	if (napi_create_promise(env, &d, &p) != napi_ok)
		return NULL;
	napi_resolve_deferred(env, d, undefined(env));
	return p;
}

/* One promise per watch, resolved when every uv handle has closed. */
static napi_value js_close(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	napi_value p;

	if (!w)
		return NULL;
	if (w->closed_promise && napi_get_reference_value(env, w->closed_promise, &p) == napi_ok)
		return p;
	if (w->closing && !w->s)
		return resolved(env);
	if (napi_create_promise(env, &w->closed, &p) != napi_ok ||
	    napi_create_reference(env, p, 1, &w->closed_promise) != napi_ok)
		return enomem(env);
	pn_watch_close(w);
	return p;
}

static napi_value js_stats(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	struct pn_cpu_stats *st;
	napi_value arr;
	size_t n;

	if (!w)
		return NULL;
	n = pn_watch_stats(w, &st);
	arr = pn_stats_js(env, st, n);
	free(st);
	return arr;
}

static napi_value set_ref(napi_env env, napi_callback_info info, bool ref)
{
	struct pn_watch *w = watch_arg(env, info);

	if (!w)
		return NULL;
	pn_watch_set_ref(w, ref);
	return undefined(env);
}

static napi_value js_ref(napi_env env, napi_callback_info info)
{
	return set_ref(env, info, true);
}

static napi_value js_unref(napi_env env, napi_callback_info info)
{
	return set_ref(env, info, false);
}

/* An argument that must be an integer in [0, max]. */
static bool index_arg(napi_env env, napi_value v, double max, double *out)
{
	napi_valuetype t;

	return napi_typeof(env, v, &t) == napi_ok && t == napi_number &&
	       napi_get_value_double(env, v, out) == napi_ok && *out >= 0 && *out <= max &&
	       *out == (double)(uint64_t)*out;
}

/* fields(handle, batch, ev, off, size): one sample's fields, decoded from
 * its RAW bytes in the batch's ArrayBuffer (a Sample's lazy getter). Every
 * argument is checked: the bytes must lie inside the buffer. */
static napi_value js_fields(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	napi_value argv[5];
	size_t argc = 5, len = 0;
	double ev, off, size;
	bool is = false;
	void *data = NULL;

	if (!w)
		return NULL;
	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 ||
	    napi_is_arraybuffer(env, argv[1], &is) != napi_ok || !is ||
	    napi_get_arraybuffer_info(env, argv[1], &data, &len) != napi_ok ||
	    !index_arg(env, argv[2], (double)w->ev_n - 1, &ev) ||
	    !index_arg(env, argv[3], (double)len, &off) ||
	    !index_arg(env, argv[4], (double)len - off, &size)) {
		pn_einval(env, "perfring: fields(handle, batch, event, offset, size): a wrong argument");
		return NULL;
	}
	return pn_fields_js(env, &w->ev[(size_t)ev], (const unsigned char *)data + (size_t)off,
			    (uint32_t)size);
}

/* layouts(handle): per event, the integer fields index.js may decode
 * itself, or null. */
static napi_value js_layouts(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	napi_value v;

	if (!w)
		return NULL;
	return (v = pn_layouts_js(env, w)) ? v : enomem(env);
}

/* exited(handle): the command's exit promise, or undefined. */
static napi_value js_exited(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);

	return w ? pn_child_exited(env, w) : NULL;
}

/* pid(handle): the command's pid, or undefined without a command. */
static napi_value js_pid(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	napi_value v = NULL;

	if (!w)
		return NULL;
	if (!w->command_pid)
		return undefined(env);
	napi_create_int32(env, w->command_pid, &v);
	return v;
}

/* The names of the watch's events, in the order of the batches' indexes. */
static napi_value js_events(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	napi_value arr, v;
	size_t i;

	if (!w)
		return NULL;
	if (napi_create_array_with_length(env, w->ev_n, &arr) != napi_ok)
		return enomem(env);
	for (i = 0; i < w->ev_n; i++)
		if (napi_create_string_utf8(env, w->ev[i].name, NAPI_AUTO_LENGTH, &v) != napi_ok ||
		    napi_set_element(env, arr, (uint32_t)i, v) != napi_ok)
			return enomem(env);
	return arr;
}

/* For the tests: the loop every handle of the watch is on, and the libuv
 * those calls reach, so a second libuv in the process would show. */
static napi_value js_diagnostics(napi_env env, napi_callback_info info)
{
	struct pn_watch *w = watch_arg(env, info);
	uv_loop_t *loop = NULL;
	napi_value obj, v;
	bool same;
	size_t i;
	Dl_info dl = { 0 };

	if (!w || napi_get_uv_event_loop(env, &loop) != napi_ok ||
	    napi_create_object(env, &obj) != napi_ok)
		return NULL;
	same = w->loop == loop && w->check.loop == loop;
	for (i = 0; i < w->handle_n; i++)
		same = same && w->handles[i]->loop == loop;
	napi_get_boolean(env, same, &v);
	napi_set_named_property(env, obj, "onNodeLoop", v);
	napi_create_uint32(env, (uint32_t)w->handle_n, &v);
	napi_set_named_property(env, obj, "handles", v);
	napi_create_string_utf8(env, uv_version_string(), NAPI_AUTO_LENGTH, &v);
	napi_set_named_property(env, obj, "uvVersion", v);
	dladdr((void *)uv_poll_init, &dl);
	napi_create_string_utf8(env, dl.dli_fname ? dl.dli_fname : "", NAPI_AUTO_LENGTH, &v);
	napi_set_named_property(env, obj, "uvFrom", v);
	return obj;
}

/* Node's NAPI_MODULE_INIT defines this without a prototype. */
NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void);

NAPI_MODULE_INIT()
{
	static const napi_property_descriptor fns[] = {
		{ .utf8name = "watch", .method = js_watch },
		{ .utf8name = "close", .method = js_close },
		{ .utf8name = "stats", .method = js_stats },
		{ .utf8name = "ref", .method = js_ref },
		{ .utf8name = "unref", .method = js_unref },
		{ .utf8name = "fields", .method = js_fields },
		{ .utf8name = "events", .method = js_events },
		{ .utf8name = "exited", .method = js_exited },
		{ .utf8name = "layouts", .method = js_layouts },
		{ .utf8name = "pid", .method = js_pid },
		{ .utf8name = "_diagnostics", .method = js_diagnostics },
	};

	if (napi_define_properties(env, exports, sizeof(fns) / sizeof(fns[0]), fns) != napi_ok)
		return NULL;
	return exports;
}
