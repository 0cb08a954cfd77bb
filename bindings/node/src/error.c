/* SPDX-License-Identifier: MIT */
/* JavaScript Errors from negative errnos: the library's sentence as the
 * message, the errno's name (ENOENT, EINVAL, ...) as `code`. */
#include "pn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *errno_name(int err, char *buf, size_t len)
{
	const char *name = strerrorname_np(err < 0 ? -err : err);

	if (name)
		return name;
	snprintf(buf, len, "E%d", err < 0 ? -err : err);
	return buf;
}

napi_value pn_error_value(napi_env env, int err, const char *sentence)
{
	napi_value msg, code, e;
	char buf[16];

	if (!sentence || !*sentence)
		sentence = perfring_strerror(err);
	if (napi_create_string_utf8(env, sentence, NAPI_AUTO_LENGTH, &msg) != napi_ok ||
	    napi_create_string_utf8(env, errno_name(err, buf, sizeof(buf)), NAPI_AUTO_LENGTH,
				    &code) != napi_ok ||
	    napi_create_error(env, NULL, msg, &e) != napi_ok ||
	    napi_set_named_property(env, e, "code", code) != napi_ok)
		return NULL;
	return e;
}

/* An 'error' event's Error: also its CPU (-1: none). */
napi_value pn_error_cpu(napi_env env, int err, const char *sentence, int cpu)
{
	napi_value e = pn_error_value(env, err, sentence), v;

	if (e && cpu >= 0 && napi_create_int32(env, cpu, &v) == napi_ok)
		napi_set_named_property(env, e, "cpu", v);
	return e;
}

/* Throws unless an exception is already pending; always returns NULL, the
 * value a Node-API function returns after throwing. */
napi_value pn_throw(napi_env env, int err, const char *sentence)
{
	bool pending = false;
	napi_value e;

	if (napi_is_exception_pending(env, &pending) == napi_ok && pending)
		return NULL;
	e = pn_error_value(env, err, sentence);
	if (e)
		napi_throw(env, e);
	return NULL;
}

/* Throws EINVAL with a sentence of our own; returns -EINVAL. */
int pn_einval(napi_env env, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pn_throw(env, -EINVAL, msg);
	return -EINVAL;
}

int pn_enomem(napi_env env)
{
	pn_throw(env, -ENOMEM, NULL);
	return -ENOMEM;
}
