/* SPDX-License-Identifier: MIT */
/* One watch's life on Node's own loop: attach, hand each batch to
 * JavaScript from the check phase, report ring errors and the end, close
 * (also at the environment's teardown), and free the memory once both the
 * JavaScript handle and the session are gone. */
#include "pn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_check(uv_check_t *h);

void pn_watch_pending(struct pn_watch *w)
{
	if (!w->closing && !uv_is_active((uv_handle_t *)&w->check))
		uv_check_start(&w->check, on_check);
}

/* Every ring of a pid-mode watch reports HUP once its task has exited;
 * the last one ends the watch. */
static void on_ring_error(int cpu, int err, void *ctx)
{
	struct pn_watch *w = ctx;

	if (err == -EPIPE) {
		if (w->hup_left && !--w->hup_left)
			w->ended = true;
	} else if (!w->ring_err) {
		w->ring_err = err;
		w->ring_err_cpu = cpu;
	}
	pn_watch_pending(w);
}

/* An exception left by JavaScript becomes an uncaughtException, as a
 * throw from any Node callback does. */
static void route_exception(napi_env env)
{
	bool pending = false;
	napi_value e;

	if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
	    napi_get_and_clear_last_exception(env, &e) == napi_ok)
		napi_fatal_exception(env, e);
}

/* Calls back as Node's own handles do: in the watch's async context, with
 * process.nextTick callbacks and microtasks run when it returns. */
static void call(struct pn_watch *w, napi_ref ref, size_t argc, napi_value *argv)
{
	napi_value fn, recv;

	route_exception(w->env);
	if (!ref || napi_get_reference_value(w->env, ref, &fn) != napi_ok || !fn ||
	    napi_get_global(w->env, &recv) != napi_ok)
		return;
	napi_make_callback(w->env, w->actx, recv, fn, argc, argv, NULL);
	route_exception(w->env);
}

void pn_watch_notify(struct pn_watch *w, const char *what, napi_value arg)
{
	napi_value v[2] = { NULL, arg };

	if (napi_create_string_utf8(w->env, what, NAPI_AUTO_LENGTH, &v[0]) == napi_ok)
		call(w, w->on_notify, arg ? 2 : 1, v);
}

static void tell_ring_error(struct pn_watch *w)
{
	char msg[256];
	int err = w->ring_err;

	w->ring_err = 0;
	snprintf(msg, sizeof(msg), "perfring: the ring of CPU %d failed on the loop (%s); it is "
		 "no longer watched", w->ring_err_cpu, perfring_strerror(err));
	pn_watch_notify(w, "error", pn_error_cpu(w->env, err, msg, w->ring_err_cpu));
}

/* The check phase runs once per loop iteration after the poll phase: every
 * drain of the iteration (wakeups, the flush timer) goes out as one array. */
static void on_check(uv_check_t *h)
{
	struct pn_watch *w = h->data;
	napi_handle_scope scope;
	napi_value batch[2];

	uv_check_stop(h);
	if (w->closing || napi_open_handle_scope(w->env, &scope) != napi_ok)
		return;
	if (w->buf.n) {
		batch[0] = pn_batch_js(w);
		if (!batch[0] || napi_create_uint32(w->env, (uint32_t)w->buf.n, &batch[1]) != napi_ok) {
			w->buf.dropped += w->buf.n;
			batch[0] = NULL;
		}
		pn_buf_reset(&w->buf);
		if (batch[0])
			call(w, w->on_samples, 2, batch);
	}
	if (!w->closing && w->ring_err)
		tell_ring_error(w);
	if (!w->closing && (w->fail_n || w->fail_lost))
		pn_cpus_tell(w);
	if (!w->closing && w->ended && !w->end_told) {
		w->end_told = true;
		pn_watch_notify(w, "end", NULL);
	}
	napi_close_handle_scope(w->env, scope);
}

static void snapshot(struct pn_watch *w)
{
	free(w->last);
	w->last = NULL;
	w->last_n = pn_watch_stats(w, &w->last);
}

/* The JavaScript references; at teardown they go from the cleanup hook,
 * while the environment still exists. */
static void drop_js(struct pn_watch *w)
{
	if (w->on_samples)
		napi_delete_reference(w->env, w->on_samples);
	if (w->on_notify)
		napi_delete_reference(w->env, w->on_notify);
	if (w->closed_promise)
		napi_delete_reference(w->env, w->closed_promise);
	if (w->actx)
		napi_async_destroy(w->env, w->actx);
	w->on_samples = w->on_notify = w->closed_promise = NULL;
	w->actx = NULL;
}

static void resolve_closed(struct pn_watch *w)
{
	napi_handle_scope hs;
	napi_callback_scope cs;
	napi_value res, undef;

	if (!w->closed || napi_open_handle_scope(w->env, &hs) != napi_ok)
		return;
	if (napi_create_object(w->env, &res) == napi_ok &&
	    napi_open_callback_scope(w->env, res, w->actx, &cs) == napi_ok) {
		napi_get_undefined(w->env, &undef);
		napi_resolve_deferred(w->env, w->closed, undef);
		w->closed = NULL;
		napi_close_callback_scope(w->env, cs);
	}
	route_exception(w->env);
	napi_close_handle_scope(w->env, hs);
}

static void finish(struct pn_watch *w)
{
	snapshot(w);
	perfring_session_free(w->s);
	w->s = NULL;
	w->a = NULL;
	pn_buf_free(&w->buf);
	free(w->handles);
	w->handles = NULL;
	w->handle_n = 0;
	if (!w->teardown) {
		resolve_closed(w);
		drop_js(w);
	}
	if (w->hook)
		napi_remove_async_cleanup_hook(w->hook);
	w->hook = NULL;
	pn_watch_unref(w);
}

static void closed_one(struct pn_watch *w)
{
	if (!--w->closes)
		finish(w);
}

static void on_check_closed(uv_handle_t *h)
{
	closed_one(h->data);
}

static void on_detached(void *ctx)
{
	closed_one(ctx);
}

/* Begins closing; the close ends in finish(), from the loop. */
void pn_watch_close(struct pn_watch *w)
{
	if (w->closing)
		return;
	w->closing = true;
	w->closes = w->a ? 2 : 1;
	uv_close((uv_handle_t *)&w->check, on_check_closed);
	if (w->a)
		perfring_libuv_detach(w->a, on_detached, w);
}

/* Node waits for the closes to end before it tears the environment down. */
static void on_teardown(napi_async_cleanup_hook_handle h, void *arg)
{
	struct pn_watch *w = arg;

	w->teardown = true;
	drop_js(w);
	pn_watch_close(w);
}

void pn_watch_unref(struct pn_watch *w)
{
	size_t i, j;

	if (--w->refs)
		return;
	pn_child_detach(w);
	for (i = 0; i < w->ev_n; i++) {
		for (j = 0; j < w->ev[i].field_n; j++)
			free(w->ev[i].fields[j].name);
		free(w->ev[i].name);
		free(w->ev[i].fields);
	}
	free(w->ev);
	free(w->last);
	free(w->fails);
	free(w);
}

size_t pn_watch_stats(struct pn_watch *w, struct pn_cpu_stats **out)
{
	const struct perfring_cpu_fd *fds;
	size_t i, n = w->s ? perfring_session_fds(w->s, &fds) : w->last_n;

	*out = NULL;
	if (!n || !(*out = calloc(n, sizeof(**out))))
		return 0;
	for (i = 0; i < n; i++) {
		if (!w->s) {
			(*out)[i] = w->last[i];
			continue;
		}
		(*out)[i].cpu = fds[i].cpu;
		perfring_session_cpu_stats(w->s, fds[i].cpu, &(*out)[i].st);
	}
	return n;
}

void pn_watch_set_ref(struct pn_watch *w, bool ref)
{
	size_t i;

	pn_child_set_ref(w, ref); /* the command's exit is waited for after close() too */
	if (w->closing)
		return;
	for (i = 0; i < w->handle_n; i++)
		(ref ? uv_ref : uv_unref)(w->handles[i]);
	(ref ? uv_ref : uv_unref)((uv_handle_t *)&w->check);
	w->unrefed = !ref;
}

/* Attaches the started session, and finds the handles the adapter made
 * (the loop's handles after attach that were not there before), so that
 * unref() can reach them. */
static int attach(napi_env env, struct pn_watch *w, const struct pn_opts *o)
{
	struct perfring_loop_opts lo = { .sz = sizeof(lo), .flush_ms = o->flush_ms,
					 .on_error = on_ring_error, .ctx = w,
					 .order_window_ns = o->order_window_ns };
	uv_handle_t **before = NULL;
	size_t before_n = 0;
	int err;

	if ((err = pn_handles_before(w->loop, &before, &before_n)))
		return pn_enomem(env);
	err = perfring_libuv_attach(w->s, w->loop, &lo, &w->a);
	if (!err)
		err = pn_handles_new(w->loop, before, before_n, &w->handles, &w->handle_n);
	free(before);
	if (err)
		pn_throw(env, err, err == -ENOMEM ? NULL : perfring_session_last_error(w->s));
	return err;
}

static int js_refs(napi_env env, struct pn_watch *w, napi_value on_samples, napi_value on_notify)
{
	napi_value name;

	if (napi_create_reference(env, on_samples, 1, &w->on_samples) != napi_ok ||
	    napi_create_reference(env, on_notify, 1, &w->on_notify) != napi_ok ||
	    napi_create_string_utf8(env, "perfring.watch", NAPI_AUTO_LENGTH, &name) != napi_ok ||
	    napi_async_init(env, NULL, name, &w->actx) != napi_ok)
		return -ENOMEM;
	return 0;
}

static void free_session(struct pn_watch *w)
{
	perfring_session_free(w->s);
	pn_buf_free(&w->buf);
	pn_watch_unref(w);
}

static void free_failed(uv_handle_t *h)
{
	free_session(h->data);
}

struct pn_watch *pn_watch_new(napi_env env, napi_value opts, napi_value on_samples,
			      napi_value on_notify)
{
	struct pn_watch *w = calloc(1, sizeof(*w));
	struct pn_opts o;
	int err;

	if (!w) {
		pn_enomem(env);
		return NULL;
	}
	w->env = env;
	w->refs = 1;
	if ((err = pn_opts_read(env, opts, &o)) ||
	    napi_get_uv_event_loop(env, &w->loop) != napi_ok ||
	    (err = pn_session_open(env, w, &o)) || (err = js_refs(env, w, on_samples, on_notify)))
		goto fail;
	uv_check_init(w->loop, &w->check);
	w->check.data = w;
	if ((err = attach(env, w, &o))) {
		pn_child_abort(w);
		w->closing = true;
		drop_js(w);
		uv_close((uv_handle_t *)&w->check, free_failed);
		pn_opts_free(&o);
		return NULL;
	}
	w->hup_left = o.pid || o.command ? perfring_session_fds(w->s, NULL) : 0;
	if (napi_add_async_cleanup_hook(env, on_teardown, w, &w->hook) != napi_ok) {
		pn_child_abort(w);
		pn_watch_close(w);
		pn_enomem(env);
		pn_opts_free(&o);
		return NULL;
	}
	/* Everything that can fail is done: the command may exec. */
	if (o.command && pn_child_release(env, w, o.command[0])) {
		pn_watch_close(w);
		pn_opts_free(&o);
		return NULL;
	}
	pn_opts_free(&o);
	return w;
fail:
	pn_enomem(env); /* unless the failure has thrown already */
	pn_child_abort(w);
	drop_js(w);
	pn_opts_free(&o);
	free_session(w);
	return NULL;
}
