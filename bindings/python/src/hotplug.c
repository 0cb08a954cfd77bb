/* SPDX-License-Identifier: MIT */
/* CPU hotplug for a Core without cpus (follow_hotplug): the loop watches
 * the session's notifier and calls hotplug_sync() when it is readable and
 * at each flush; a CPU that leaves is drained through the events'
 * callbacks (the pull form never makes changes), whose samples the sync
 * returns, and the loop then watches fds() again. */
#include "py.h"

#include <errno.h>

/* Non-zero stops the drain; the record stays for the next one. */
static int on_drained(const struct perfring_sample *s, void *ctx)
{
	pr_core *c = ctx;
	pr_event *e = pr_core_event(c, s->event);
	PyObject *buf = NULL;
	pr_sample *o;
	int r;

	if (!e || !c->cb_batch)
		return 1;
	if (s->raw && s->raw_size && !(buf = PyBytes_FromStringAndSize(s->raw, s->raw_size)))
		return 1;
	o = pr_sample_new(e, s, buf, 0);
	Py_XDECREF(buf);
	if (!o)
		return 1;
	r = PyList_Append(c->cb_batch, (PyObject *)o);
	Py_DECREF(o);
	return r < 0;
}

/* Before start: every perf event's samples reach on_drained (only the
 * hotplug drains call callbacks). */
int pr_hotplug_prepare(pr_core *c)
{
	Py_ssize_t i;
	int err;

	for (i = 0; i < PyList_GET_SIZE(c->events); i++)
		if ((err = perfring_event_set_callback(((pr_event *)PyList_GET_ITEM(c->events, i))->ev,
						       on_drained, c))) {
			pr_py_raise_session(err, c->s);
			return -1;
		}
	return 0;
}

/* hotplug_fd() -> the notifier's fd, or None without one. */
PyObject *pr_core_hotplug_fd(pr_core *c, PyObject *noarg)
{
	int fd;

	(void)noarg;
	if (pr_core_check(c, true) < 0)
		return NULL;
	if (!c->follow)
		Py_RETURN_NONE;
	fd = perfring_session_hotplug_fd(c->s);
	if (fd == -ENOENT)
		Py_RETURN_NONE;
	if (fd < 0)
		return pr_py_raise_session(fd, c->s);
	return PyLong_FromLong(fd);
}

/* hotplug_sync() -> [Sample]: the changes made, the samples of the CPUs
 * that left. Without follow_hotplug: []. */
PyObject *pr_core_hotplug_sync(pr_core *c, PyObject *noarg)
{
	PyObject *list;
	int n;

	(void)noarg;
	if (pr_core_check(c, true) < 0 || !(list = PyList_New(0)))
		return NULL;
	if (!c->follow)
		return list;
	if (c->cb_batch) {
		Py_DECREF(list);
		return pr_py_raise(-EBUSY, "hotplug_sync: a sync is running");
	}
	c->cb_batch = list;
	n = perfring_session_hotplug_sync(c->s);
	c->cb_batch = NULL;
	if (PyErr_Occurred() || n < 0) {
		Py_DECREF(list);
		return n < 0 && !PyErr_Occurred() ? pr_py_raise_session(n, c->s) : NULL;
	}
	return list;
}
