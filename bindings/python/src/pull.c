/* SPDX-License-Identifier: MIT */
/* The batch pull: one CPU's records, many a call (perfring_cpu_pull), into a
 * list of Samples whose payloads share one bytes object per pull. */
#include "py.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#define PULL_ITEMS 256

pr_event *pr_core_event(pr_core *c, const struct perfring_event *ev)
{
	Py_ssize_t i, n = PyList_GET_SIZE(c->events);
	pr_event *e;

	for (i = 0; i < n; i++) {
		e = (pr_event *)PyList_GET_ITEM(c->events, i);
		if (e->ev == ev)
			return e;
	}
	return NULL;
}

static pr_event *event_of(pr_core *c, const struct perfring_event *ev, pr_event **last)
{
	if (*last && (*last)->ev == ev)
		return *last;
	return *last = pr_core_event(c, ev);
}

/* The n items' samples appended to list; kernel records (LOST, ...) are in
 * the stats only. */
static int append(pr_core *c, const struct perfring_item *it, int n, PyObject *list)
{
	Py_ssize_t total = 0, off = 0;
	pr_event *last = NULL, *e;
	PyObject *buf = NULL;
	pr_sample *o;
	int i;

	for (i = 0; i < n; i++)
		if (it[i].kind == PERFRING_NEXT_SAMPLE && it[i].u.sample.raw)
			total += it[i].u.sample.raw_size;
	if (total && !(buf = PyBytes_FromStringAndSize(NULL, total)))
		return -1;
	for (i = 0; i < n; i++) {
		const struct perfring_sample *s = &it[i].u.sample;

		if (it[i].kind != PERFRING_NEXT_SAMPLE || !(e = event_of(c, s->event, &last)))
			continue;
		if (s->raw && s->raw_size)
			memcpy(PyBytes_AS_STRING(buf) + off, s->raw, s->raw_size);
		o = pr_sample_new(e, s, s->raw && s->raw_size ? buf : NULL, off);
		if (s->raw)
			off += s->raw_size;
		if (!o || PyList_Append(list, (PyObject *)o) < 0) {
			Py_XDECREF(o);
			Py_XDECREF(buf);
			return -1;
		}
		Py_DECREF(o);
	}
	Py_XDECREF(buf);
	return 0;
}

/* Pulls cpu's ring into list until it is empty or max records (0: no
 * limit) are read; *more when records were left. 0 or -1 (raised). */
static int pull_cpu(pr_core *c, int cpu, Py_ssize_t max, PyObject *list, bool *more)
{
	Py_ssize_t got = 0;
	int n;

	*more = false;
	for (;;) {
		n = perfring_cpu_pull(c->s, cpu, c->items, PULL_ITEMS);
		if (n < 0) {
			pr_py_raise_session(n, c->s);
			perfring_cpu_commit(c->s, cpu);
			return -1;
		}
		if (n && append(c, c->items, n, list) < 0) {
			perfring_cpu_commit(c->s, cpu);
			return -1;
		}
		got += n;
		/* Fewer than asked: the pull found the ring empty. */
		if (n < PULL_ITEMS)
			break;
		if (max && got >= max) {
			*more = true;
			break;
		}
	}
	if (n > 0)
		perfring_cpu_commit(c->s, cpu);
	return 0;
}

PyObject *pr_core_pull(pr_core *c, PyObject *args)
{
	Py_ssize_t max = 0;
	PyObject *list;
	bool more;
	int cpu;

	if (!PyArg_ParseTuple(args, "i|n:pull", &cpu, &max) || pr_core_check(c, true) < 0)
		return NULL;
	if (max < 0)
		return PyErr_Format(PyExc_ValueError, "pull: max must be >= 0");
	if (!(list = PyList_New(0)))
		return NULL;
	if (pull_cpu(c, cpu, max, list, &more) < 0) {
		Py_DECREF(list);
		return NULL;
	}
	return Py_BuildValue("(NO)", list, more ? Py_True : Py_False);
}

/* Every ring drained, CPU by CPU, into one list (a flush, the end). */
PyObject *pr_core_pull_all(pr_core *c, PyObject *noarg)
{
	const struct perfring_cpu_fd *fds;
	PyObject *list;
	size_t i, n;
	bool more;

	(void)noarg;
	if (pr_core_check(c, true) < 0 || !(list = PyList_New(0)))
		return NULL;
	n = perfring_session_fds(c->s, &fds);
	for (i = 0; i < n; i++)
		if (pull_cpu(c, fds[i].cpu, 0, list, &more) < 0) {
			Py_DECREF(list);
			return NULL;
		}
	return list;
}

/* Whether cpu's fd reports its end: its task exited (pid mode). A loop that
 * folds HUP into "readable" (asyncio's) would call back forever. */
PyObject *pr_core_hup(pr_core *c, PyObject *args)
{
	struct pollfd p = { .events = POLLIN };
	int cpu, r;

	if (!PyArg_ParseTuple(args, "i:hup", &cpu) || pr_core_check(c, true) < 0)
		return NULL;
	if ((p.fd = perfring_session_fd_for_cpu(c->s, cpu)) < 0)
		return pr_py_raise_session(p.fd, c->s);
	do
		r = poll(&p, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return pr_py_raise(-errno, "poll of a ring's fd failed");
	return PyBool_FromLong(r > 0 && (p.revents & (POLLHUP | POLLERR)));
}
