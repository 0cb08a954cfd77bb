/* SPDX-License-Identifier: MIT */
/* perfring._perfring.Core: one started session (and, with command=, the
 * child it watches from its exec on), its rings' fds and stats, closed once.
 * perfring/_aio.py and _sync.py are the loops around it. */
#include "py.h"

#include <errno.h>
#include <string.h>

#define MAX_CPUS 4096

int pr_core_check(pr_core *c, bool started)
{
	if (c->closed || !c->s) {
		pr_py_raise(-EBADF, "this perfring session is closed");
		return -1;
	}
	if (started && !c->started) {
		pr_py_raise(-ENOTCONN, "this perfring session is not started");
		return -1;
	}
	return 0;
}

static void core_release(pr_core *c)
{
	if (c->child.pid > 0)
		pr_spawn_abort(&c->child);
	perfring_session_free(c->s);
	c->s = NULL;
	c->closed = true;
}

static int cpus_of(PyObject *v, int **out, size_t *n)
{
	Py_ssize_t i, len;
	long cpu;

	*out = NULL;
	*n = 0;
	if (v == Py_None)
		return 0;
	if (!PyList_Check(v) && !PyTuple_Check(v)) {
		PyErr_Format(PyExc_TypeError, "cpus must be a list of int, not %.80s",
			     Py_TYPE(v)->tp_name);
		return -1;
	}
	len = PySequence_Fast_GET_SIZE(v);
	if (!len || len > MAX_CPUS) {
		PyErr_Format(PyExc_ValueError, "cpus must hold 1 to %d CPUs", MAX_CPUS);
		return -1;
	}
	if (!(*out = PyMem_Calloc((size_t)len, sizeof(int)))) {
		PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < len; i++) {
		PyObject *e = PySequence_Fast_GET_ITEM(v, i);

		if (!PyLong_Check(e) || PyBool_Check(e)) {
			PyErr_Format(PyExc_TypeError, "cpus[%zd] must be an int, not %.80s", i,
				     Py_TYPE(e)->tp_name);
			return -1;
		}
		cpu = PyLong_AsLong(e);
		if ((cpu == -1 && PyErr_Occurred()) || cpu < 0 || cpu >= MAX_CPUS) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "cpus[%zd] must be from 0 to %d", i,
				     MAX_CPUS - 1);
			return -1;
		}
		(*out)[(*n)++] = (int)cpu;
	}
	return 0;
}

/* command= as a NULL-terminated argv; the strings belong to the list. */
static int argv_of(PyObject *v, char ***out)
{
	Py_ssize_t i, len, n;

	*out = NULL;
	if (v == Py_None)
		return 0;
	if (!PyList_Check(v) && !PyTuple_Check(v)) {
		PyErr_Format(PyExc_TypeError, "command must be a list of str, not %.80s",
			     Py_TYPE(v)->tp_name);
		return -1;
	}
	if (!(len = PySequence_Fast_GET_SIZE(v))) {
		PyErr_SetString(PyExc_ValueError, "command must name a program");
		return -1;
	}
	if (!(*out = PyMem_Calloc((size_t)len + 1, sizeof(char *)))) {
		PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < len; i++) {
		PyObject *e = PySequence_Fast_GET_ITEM(v, i);

		if (!PyUnicode_Check(e)) {
			PyErr_Format(PyExc_TypeError, "command[%zd] must be a str, not %.80s", i,
				     Py_TYPE(e)->tp_name);
			return -1;
		}
		if (!((*out)[i] = (char *)PyUnicode_AsUTF8AndSize(e, &n)))
			return -1;
		if ((size_t)n != strlen((*out)[i]) || (!i && !n)) {
			PyErr_Format(PyExc_ValueError, "command[%zd] is empty or holds a NUL", i);
			return -1;
		}
	}
	return 0;
}

static int open_session(pr_core *c, struct perfring_opts *o, PyObject *ev, PyObject *sw,
			PyObject *filters, PyObject *outputs, PyObject *ringbufs)
{
	int err;

	if ((err = perfring_session_new(o, &c->s))) {
		pr_py_raise_session(err, NULL);
		return -1;
	}
	if (pr_core_add_events(c, ev, sw, filters) < 0 || pr_core_add_bpf(c, outputs, ringbufs) < 0)
		return -1;
	if (c->follow && pr_hotplug_prepare(c) < 0)
		return -1;
	if ((err = perfring_session_start(c->s))) {
		pr_py_raise_session(err, c->s);
		return -1;
	}
	c->started = true;
	return 0;
}

static int run_child(pr_core *c, char **argv)
{
	char msg[512];
	int err = pr_spawn_release(&c->child);

	if (!err)
		return 0;
	snprintf(msg, sizeof(msg), "command: '%s' could not be run: %s", argv[0], strerror(-err));
	pr_py_raise(err, msg);
	return -1;
}

static int core_init(pr_core *c, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "events", "software", "cpus", "pid", "watermark", "pages",
				  "flush_ms", "order_window_ns", "filters", "bpf_output",
				  "bpf_ringbuf", "command", "follow_hotplug", NULL };
	PyObject *ev = Py_None, *sw = Py_None, *cpus = Py_None, *filters = Py_None;
	PyObject *outputs = Py_None, *ringbufs = Py_None, *command = Py_None;
	int pid = 0, watermark = 0, pages = 0, flush_ms = 0, *cpuv = NULL, r = -1, follow = 0;
	unsigned long long window = 0;
	struct perfring_opts o = { .sz = sizeof(o) };
	char **argv = NULL;
	size_t cpu_n = 0;

	if (c->s || c->closed) {
		PyErr_SetString(PyExc_RuntimeError, "a Core is initialised once");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOiiiiKOOOOp:Core", kwlist, &ev, &sw,
					 &cpus, &pid, &watermark, &pages, &flush_ms, &window,
					 &filters, &outputs, &ringbufs, &command, &follow))
		return -1;
	if (pid < 0 || watermark < 0 || pages < 0 || flush_ms < 0) {
		PyErr_SetString(PyExc_ValueError, "pid, watermark, pages and flush_ms must be >= 0");
		return -1;
	}
	if (cpus_of(cpus, &cpuv, &cpu_n) < 0 || argv_of(command, &argv) < 0)
		goto out;
	if (argv && pid) {
		PyErr_SetString(PyExc_ValueError, "give command or pid, not both");
		goto out;
	}
	if (argv && (r = pr_spawn_stopped(argv, &c->child))) {
		pr_py_raise(r, "command: the child could not be made (fork)");
		r = -1;
		goto out;
	}
	o.cpus = cpuv;
	o.cpu_cnt = cpu_n;
	o.pid = argv ? c->child.pid : pid;
	o.enable_on_exec = argv != NULL;
	o.ring_pages = (uint32_t)pages;
	o.wakeup_watermark = (uint32_t)watermark;
	o.flush_ms = (uint32_t)flush_ms;
	o.poll_interval_ms = (uint32_t)flush_ms;
	o.order_window_ns = window;
	o.follow_hotplug = (uint32_t)follow;
	c->follow = follow;
	r = open_session(c, &o, ev, sw, filters, outputs, ringbufs);
	if (!r && argv)
		r = run_child(c, argv);
out:
	if (r < 0)
		core_release(c);
	PyMem_Free(cpuv);
	PyMem_Free(argv);
	return r;
}

static PyObject *core_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	pr_core *c = (pr_core *)t->tp_alloc(t, 0);

	(void)args;
	(void)kw;
	if (!c)
		return NULL;
	c->child.pid = -1;
	c->child.go = c->child.status = -1;
	c->events = PyList_New(0);
	c->ringbufs = PyList_New(0);
	c->items = PyMem_Calloc(256, sizeof(*c->items));
	if (!c->events || !c->ringbufs || !c->items) {
		Py_DECREF(c);
		return PyErr_NoMemory();
	}
	return (PyObject *)c;
}

static void core_dealloc(pr_core *c)
{
	core_release(c);
	Py_XDECREF(c->events);
	Py_XDECREF(c->ringbufs);
	PyMem_Free(c->items);
	Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *core_close(pr_core *c, PyObject *noarg)
{
	(void)noarg;
	core_release(c);
	Py_RETURN_NONE;
}

static PyObject *core_fds(pr_core *c, PyObject *noarg)
{
	const struct perfring_cpu_fd *fds;
	PyObject *list, *t;
	size_t i, n;

	(void)noarg;
	if (pr_core_check(c, true) < 0 || !(list = PyList_New(0)))
		return NULL;
	n = perfring_session_fds(c->s, &fds);
	for (i = 0; i < n; i++) {
		if (!(t = Py_BuildValue("(ii)", fds[i].cpu, fds[i].fd)) || PyList_Append(list, t) < 0) {
			Py_XDECREF(t);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(t);
	}
	return list;
}

static PyObject *stats_dict(int cpu, const struct perfring_cpu_stats *st)
{
	return Py_BuildValue("{s:i,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:I,s:O}", "cpu", cpu,
			     "records", (unsigned long long)st->records,
			     "samples", (unsigned long long)st->samples,
			     "bytes", (unsigned long long)st->bytes,
			     "lost", (unsigned long long)st->lost,
			     "corrupt", (unsigned long long)st->corrupt,
			     "wakeups", (unsigned long long)st->wakeups,
			     "flushes", (unsigned long long)st->flushes,
			     "late", (unsigned long long)st->late,
			     "unknown", (unsigned long long)st->unknown,
			     "max_fill_pct", st->max_fill_pct, "hup", st->hup ? Py_True : Py_False);
}

static PyObject *core_stats(pr_core *c, PyObject *noarg)
{
	const struct perfring_cpu_fd *fds;
	struct perfring_cpu_stats st;
	PyObject *list, *d;
	size_t i, n;
	int err;

	(void)noarg;
	if (pr_core_check(c, true) < 0 || !(list = PyList_New(0)))
		return NULL;
	n = perfring_session_fds(c->s, &fds);
	for (i = 0; i < n; i++) {
		if ((err = perfring_session_cpu_stats(c->s, fds[i].cpu, &st))) {
			Py_DECREF(list);
			return pr_py_raise_session(err, c->s);
		}
		if (!(d = stats_dict(fds[i].cpu, &st)) || PyList_Append(list, d) < 0) {
			Py_XDECREF(d);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(d);
	}
	return list;
}

static PyObject *core_child_pid(pr_core *c, void *closure)
{
	(void)closure;
	return PyLong_FromLong(c->child.pid);
}

static PyObject *core_closed(pr_core *c, void *closure)
{
	(void)closure;
	return PyBool_FromLong(c->closed);
}

/* The watched process has exited: disabling every event lets the next pull
 * of each ring read the kernel's own drop counts (R4), so that samples +
 * lost add up to what was produced even when a ring was full to its end. */
static PyObject *core_stop(pr_core *c, PyObject *noarg)
{
	int err;

	(void)noarg;
	if (pr_core_check(c, true) < 0)
		return NULL;
	if ((err = perfring_session_stop(c->s)))
		return pr_py_raise_session(err, c->s);
	Py_RETURN_NONE;
}

static PyObject *core_release_child(pr_core *c, PyObject *noarg)
{
	/* The child is the caller's from here on (waitpid): never killed at close. */
	(void)noarg;
	c->child.pid = -1;
	Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
	{ "close", (PyCFunction)core_close, METH_NOARGS, "close(): frees the session (idempotent)" },
	{ "fds", (PyCFunction)core_fds, METH_NOARGS, "fds() -> [(cpu, fd)]: the rings' fds" },
	{ "stats", (PyCFunction)core_stats, METH_NOARGS, "stats() -> [dict] per CPU" },
	{ "pull", (PyCFunction)pr_core_pull, METH_VARARGS,
	  "pull(cpu, max=0) -> ([Sample], more): cpu's ring drained (max records, 0 = all)" },
	{ "pull_all", (PyCFunction)pr_core_pull_all, METH_NOARGS, "pull_all() -> [Sample]" },
	{ "hup", (PyCFunction)pr_core_hup, METH_VARARGS, "hup(cpu) -> bool: its fd reports HUP" },
	{ "ringbuf_fds", (PyCFunction)pr_core_ringbuf_fds, METH_NOARGS,
	  "ringbuf_fds() -> [(index, fd)]" },
	{ "ringbuf_pull", (PyCFunction)pr_core_ringbuf_pull, METH_VARARGS,
	  "ringbuf_pull(index) -> [Sample]" },
	{ "hotplug_fd", (PyCFunction)pr_core_hotplug_fd, METH_NOARGS,
	  "hotplug_fd() -> the hotplug notifier's fd to watch, or None" },
	{ "hotplug_sync", (PyCFunction)pr_core_hotplug_sync, METH_NOARGS,
	  "hotplug_sync() -> [Sample]: CPU changes made, the leaving CPUs' samples" },
	{ "stop", (PyCFunction)core_stop, METH_NOARGS,
	  "stop(): disables every event; the rings stay readable" },
	{ "disown_child", (PyCFunction)core_release_child, METH_NOARGS,
	  "disown_child(): the caller reaps the child" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef core_getset[] = {
	{ "child_pid", (getter)core_child_pid, NULL, "command='s child, -1 without one", NULL },
	{ "closed", (getter)core_closed, NULL, "whether close() has run", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject pr_core_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfring._perfring.Core",
	.tp_basicsize = sizeof(pr_core),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A started session: the loops of perfring.watch and perfring.Session use it.",
	.tp_new = core_new,
	.tp_init = (initproc)core_init,
	.tp_dealloc = (destructor)core_dealloc,
	.tp_methods = core_methods,
	.tp_getset = core_getset,
};
