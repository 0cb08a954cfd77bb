/* SPDX-License-Identifier: MIT */
/* The command a watch starts (the `command` option): forked stopped
 * (bindings/common/spawn.c), watched with pid = the child and
 * enable_on_exec, released once the watch is attached, and its exit told
 * through `w.exited`, a promise of { code, signal }. The exit is seen on
 * Node's loop through a pidfd (readable once the child has exited) and
 * reaped with waitid(P_PIDFD), so no SIGCHLD handler is involved and Node's
 * own children are never touched (without pidfd_open, a 10 ms timer and
 * waitid(P_PID, WNOHANG)). The child outlives its watch: close()
 * stops the records, not the wait for the exit. */
#include "pn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3 /* Linux 5.4; glibc 2.36's <sys/wait.h> lacks it */
#endif

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void drop_ref(napi_env env, napi_ref *ref)
{
	if (*ref)
		napi_delete_reference(env, *ref);
	*ref = NULL;
}

static void unhook(struct pn_child *c)
{
	drop_ref(c->env, &c->resolve);
	drop_ref(c->env, &c->reject);
	drop_ref(c->env, &c->promise);
	if (c->actx)
		napi_async_destroy(c->env, c->actx);
	c->actx = NULL;
	if (c->hook)
		napi_remove_async_cleanup_hook(c->hook);
	c->hook = NULL;
}

static void child_free(struct pn_child *c)
{
	if (c->w)
		c->w->child = NULL;
	close_fd(&c->pidfd);
	free(c);
}

/* { code, signal }: as a ChildProcess's 'exit' gives them, one of the two
 * null. */
static napi_value status_js(napi_env env, const siginfo_t *si)
{
	napi_value obj, code, sig;
	char name[32];
	const char *abbrev;

	if (napi_create_object(env, &obj) != napi_ok || napi_get_null(env, &code) != napi_ok ||
	    napi_get_null(env, &sig) != napi_ok)
		return NULL;
	if (si->si_code == CLD_EXITED) {
		napi_create_int32(env, si->si_status, &code);
	} else {
		abbrev = sigabbrev_np(si->si_status);
		if (abbrev)
			snprintf(name, sizeof(name), "SIG%s", abbrev);
		else
			snprintf(name, sizeof(name), "SIG%d", si->si_status);
		napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &sig);
	}
	if (napi_set_named_property(env, obj, "code", code) != napi_ok ||
	    napi_set_named_property(env, obj, "signal", sig) != napi_ok)
		return NULL;
	return obj;
}

/* Calls the promise's resolve or reject with v. */
static void settle_with(napi_env env, napi_ref fn_ref, napi_value v)
{
	napi_value fn, undef;

	if (v && napi_get_reference_value(env, fn_ref, &fn) == napi_ok && fn &&
	    napi_get_undefined(env, &undef) == napi_ok)
		napi_call_function(env, undef, fn, 1, &v, NULL);
}

/* Settles `exited` as Node's own callbacks run: in a callback scope, so
 * the awaiting code and the microtasks run when it closes. */
static void settle(struct pn_child *c)
{
	napi_handle_scope hs;
	napi_callback_scope cs;
	napi_value res, st = NULL;
	bool pending = false;

	if (!c->resolve || napi_open_handle_scope(c->env, &hs) != napi_ok)
		return;
	if (napi_create_object(c->env, &res) == napi_ok &&
	    napi_open_callback_scope(c->env, res, c->actx, &cs) == napi_ok) {
		if (!c->wait_err && (st = status_js(c->env, &c->si)))
			settle_with(c->env, c->resolve, st);
		else
			settle_with(c->env, c->reject, pn_error_value(c->env,
				c->wait_err ? c->wait_err : -ENOMEM, c->wait_err ?
				"perfring.watch: the command's exit status could not be read: "
				"another waitpid() in the process took it" : NULL));
		drop_ref(c->env, &c->resolve);
		drop_ref(c->env, &c->reject);
		napi_close_callback_scope(c->env, cs);
	}
	if (napi_is_exception_pending(c->env, &pending) == napi_ok && pending &&
	    napi_get_and_clear_last_exception(c->env, &res) == napi_ok)
		napi_fatal_exception(c->env, res);
	napi_close_handle_scope(c->env, hs);
}

static void on_closed(uv_handle_t *h)
{
	struct pn_child *c = h->data;

	if (!c->teardown)
		settle(c);
	unhook(c);
	child_free(c);
}

static void stop(struct pn_child *c)
{
	if (c->polling) {
		c->polling = false;
		uv_close(&c->h.handle, on_closed);
	} else {
		unhook(c);
		child_free(c);
	}
}

/* Whether the child has exited (then reaped: c->si, or c->wait_err when
 * someone else's waitpid took it). */
static bool exited_now(struct pn_child *c)
{
	siginfo_t si;
	int r;

	memset(&si, 0, sizeof(si));
	if (c->pidfd >= 0)
		r = waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED | WNOHANG);
	else
		r = waitid(P_PID, (id_t)c->sp.pid, &si, WEXITED | WNOHANG);
	if (r == 0 && si.si_pid == 0)
		return false; /* not yet */
	if (r < 0 && errno == EINTR)
		return false;
	if (r == 0)
		c->si = si;
	else
		c->wait_err = -errno;
	c->sp.pid = -1;
	return true;
}

/* The pidfd is readable once the child has exited. */
static void on_exit_ready(uv_poll_t *h, int status, int events)
{
	struct pn_child *c = h->data;

	if (exited_now(c)) {
		uv_poll_stop(h);
		stop(c);
	}
}

/* Without pidfds (Linux < 5.3, valgrind): the exit is looked for on a
 * timer, still never through SIGCHLD. */
static void on_tick(uv_timer_t *h)
{
	struct pn_child *c = h->data;

	if (exited_now(c)) {
		uv_timer_stop(h);
		stop(c);
	}
}

/* Node's environment goes away: the child is left to run (as Node leaves
 * its own children), its pidfd closed. `exited` stays pending: no
 * JavaScript runs now, and dropping the references frees what it holds. */
static void on_teardown(napi_async_cleanup_hook_handle h, void *arg)
{
	struct pn_child *c = arg;

	c->teardown = true;
	stop(c);
}

static int spawn_error(napi_env env, int err, char *const argv[], const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "perfring.watch: command '%s' %s: %s", argv[0], what,
		 perfring_strerror(err));
	pn_throw(env, err, msg);
	return err;
}

int pn_child_spawn(napi_env env, struct pn_watch *w, char *const argv[])
{
	struct pn_child *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return pn_enomem(env);
	c->env = env;
	c->pidfd = -1;
	c->w = w;
	w->child = c;
	if ((err = pr_spawn_stopped(argv, &c->sp))) {
		child_free(c);
		return spawn_error(env, err, argv, "could not be started");
	}
	c->pidfd = (int)syscall(SYS_pidfd_open, c->sp.pid, 0);
	if (c->pidfd < 0 && errno != ENOSYS) {
		err = -errno;
		pn_child_abort(w);
		return spawn_error(env, err, argv, "could not be watched (pidfd_open)");
	}
	return 0;
}

/* The watch could not be made: the child never runs its command. */
void pn_child_abort(struct pn_watch *w)
{
	struct pn_child *c = w->child;

	if (!c)
		return;
	pr_spawn_abort(&c->sp);
	stop(c);
}

/* After a release: the command runs, but its exit cannot be waited for on
 * the loop; it is killed and reaped here. */
static int unwatchable(napi_env env, struct pn_child *c, int err)
{
	kill(c->sp.pid, SIGKILL);
	while (waitpid(c->sp.pid, NULL, 0) < 0 && errno == EINTR)
		;
	c->sp.pid = -1;
	stop(c);
	pn_throw(env, err, "perfring.watch: the command's exit could not be watched on the loop");
	return err;
}

/* The executor of `new Promise()`: keeps its resolve and reject. */
static napi_value keep_settlers(napi_env env, napi_callback_info info)
{
	struct pn_child *c = NULL;
	napi_value argv[2];
	size_t argc = 2;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&c) == napi_ok && c &&
	    argc == 2 && napi_create_reference(env, argv[0], 1, &c->resolve) == napi_ok)
		napi_create_reference(env, argv[1], 1, &c->reject);
	return NULL;
}

/* `exited`, made with its settling functions kept in references rather than
 * through napi_create_promise: Node-API frees a napi_deferred only when it
 * is settled, which it refuses once JavaScript can no longer run, so one
 * left pending at exit (an unref'd watch on a command still running)
 * leaked; a reference is freed whenever it is deleted. */
static int make_promise(napi_env env, struct pn_child *c)
{
	napi_value global, ctor, exec, promise, name;

	if (napi_get_global(env, &global) != napi_ok ||
	    napi_get_named_property(env, global, "Promise", &ctor) != napi_ok ||
	    napi_create_function(env, "exited", NAPI_AUTO_LENGTH, keep_settlers, c, &exec) !=
		    napi_ok ||
	    napi_new_instance(env, ctor, 1, &exec, &promise) != napi_ok || !c->reject ||
	    napi_create_reference(env, promise, 1, &c->promise) != napi_ok ||
	    napi_create_string_utf8(env, "perfring.watch.exited", NAPI_AUTO_LENGTH, &name) != napi_ok ||
	    napi_async_init(env, NULL, name, &c->actx) != napi_ok ||
	    napi_add_async_cleanup_hook(env, on_teardown, c, &c->hook) != napi_ok) {
		drop_ref(env, &c->resolve); /* never settled: the child's close must not */
		drop_ref(env, &c->reject);
		return -ENOMEM;
	}
	return 0;
}

/* Lets the child exec, then waits for its exit on the loop. */
int pn_child_release(napi_env env, struct pn_watch *w, const char *prog)
{
	struct pn_child *c = w->child;
	char *const argv[] = { (char *)prog, NULL };
	int err;

	if ((err = pr_spawn_release(&c->sp))) {
		pn_child_abort(w);
		return spawn_error(env, err, argv, "could not be run");
	}
	if (c->pidfd >= 0)
		err = uv_poll_init(w->loop, &c->h.poll, c->pidfd);
	else
		err = uv_timer_init(w->loop, &c->h.timer);
	if (err)
		return unwatchable(env, c, err);
	c->h.handle.data = c;
	c->polling = true;
	if (c->pidfd >= 0)
		err = uv_poll_start(&c->h.poll, UV_READABLE, on_exit_ready);
	else
		err = uv_timer_start(&c->h.timer, on_tick, 10, 10);
	if (err || (err = make_promise(env, c)))
		return unwatchable(env, c, err);
	if (w->unrefed)
		uv_unref(&c->h.handle);
	return 0;
}

napi_value pn_child_exited(napi_env env, struct pn_watch *w)
{
	napi_value v = NULL;

	if (!w->child || !w->child->promise ||
	    napi_get_reference_value(env, w->child->promise, &v) != napi_ok || !v)
		napi_get_undefined(env, &v);
	return v;
}

void pn_child_set_ref(struct pn_watch *w, bool ref)
{
	if (w->child && w->child->polling)
		(ref ? uv_ref : uv_unref)(&w->child->h.handle);
}

/* The watch is freed; the child's wait goes on alone. */
void pn_child_detach(struct pn_watch *w)
{
	if (w->child)
		w->child->w = NULL;
	w->child = NULL;
}
