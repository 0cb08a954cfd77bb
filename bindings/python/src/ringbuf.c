/* SPDX-License-Identifier: MIT */
/* BPF ring buffers (bpf_ringbuf=): each map's fd is watched like a ring's,
 * and perfring_ringbuf_parse() hands its records to a callback that makes
 * Samples (cpu -1). The calls are weak: a libperfring built before them
 * lets the module load, and bpf_ringbuf= then raises EOPNOTSUPP. */
#include "py.h"

#include <errno.h>

#pragma weak perfring_session_add_bpf_ringbuf
#pragma weak perfring_ringbuf_fd
#pragma weak perfring_ringbuf_parse

int pr_ringbuf_available(void)
{
	return perfring_session_add_bpf_ringbuf && perfring_ringbuf_fd && perfring_ringbuf_parse;
}

static pr_event *ringbuf_event(pr_core *c, const struct perfring_event *ev)
{
	Py_ssize_t i;

	for (i = 0; i < PyList_GET_SIZE(c->ringbufs); i++)
		if (((pr_event *)PyList_GET_ITEM(c->ringbufs, i))->ev == ev)
			return (pr_event *)PyList_GET_ITEM(c->ringbufs, i);
	return NULL;
}

/* Non-zero stops the parse; the record stays for the next one. */
static int on_record(const struct perfring_sample *s, void *ctx)
{
	pr_core *c = ctx;
	pr_event *e = ringbuf_event(c, s->event);
	PyObject *buf;
	pr_sample *o;
	int r;

	if (!e || !c->rb_batch)
		return 1;
	if (!(buf = PyBytes_FromStringAndSize(s->raw, s->raw_size)))
		return 1;
	o = pr_sample_new(e, s, s->raw_size ? buf : NULL, 0);
	Py_DECREF(buf);
	if (!o)
		return 1;
	r = PyList_Append(c->rb_batch, (PyObject *)o);
	Py_DECREF(o);
	return r < 0;
}

int pr_ringbuf_add(pr_core *c, int fd)
{
	struct perfring_ringbuf_opts o = { .sz = sizeof(o) };
	struct perfring_event *ev;
	pr_event *e;
	int err, r;

	if ((err = perfring_session_add_bpf_ringbuf(c->s, fd, &o, &ev))) {
		pr_py_raise_session(err, c->s);
		return -1;
	}
	perfring_event_set_callback(ev, on_record, c);
	if (!(e = pr_event_new("bpf_ringbuf", ev)))
		return -1;
	r = PyList_Append(c->ringbufs, (PyObject *)e);
	Py_DECREF(e);
	return r;
}

/* [(index, fd), ...] of the ring buffers, to watch for reading. */
PyObject *pr_core_ringbuf_fds(pr_core *c, PyObject *noarg)
{
	PyObject *list, *t;
	Py_ssize_t i;
	int fd;

	(void)noarg;
	if (pr_core_check(c, true) < 0 || !(list = PyList_New(0)))
		return NULL;
	for (i = 0; i < PyList_GET_SIZE(c->ringbufs); i++) {
		fd = perfring_ringbuf_fd(((pr_event *)PyList_GET_ITEM(c->ringbufs, i))->ev);
		if (fd < 0) {
			Py_DECREF(list);
			return pr_py_raise_session(fd, c->s);
		}
		if (!(t = Py_BuildValue("(ni)", i, fd)) || PyList_Append(list, t) < 0) {
			Py_XDECREF(t);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(t);
	}
	return list;
}

/* ringbuf_pull(index) -> list of Samples: the ring buffer drained. */
PyObject *pr_core_ringbuf_pull(pr_core *c, PyObject *args)
{
	PyObject *list;
	Py_ssize_t i;
	int n;

	if (!PyArg_ParseTuple(args, "n:ringbuf_pull", &i) || pr_core_check(c, true) < 0)
		return NULL;
	if (i < 0 || i >= PyList_GET_SIZE(c->ringbufs))
		return PyErr_Format(PyExc_IndexError, "ringbuf_pull: no ring buffer %zd", i);
	if (c->rb_batch)
		return pr_py_raise(-EBUSY, "ringbuf_pull: a pull is running");
	if (!(list = c->rb_batch = PyList_New(0)))
		return NULL;
	n = perfring_ringbuf_parse(((pr_event *)PyList_GET_ITEM(c->ringbufs, i))->ev, 0, NULL);
	c->rb_batch = NULL;
	if (PyErr_Occurred() || n < 0) {
		Py_DECREF(list);
		return n < 0 && !PyErr_Occurred() ? pr_py_raise_session(n, c->s) : NULL;
	}
	return list;
}
