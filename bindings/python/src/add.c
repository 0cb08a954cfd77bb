/* SPDX-License-Identifier: MIT */
/* Core(...)'s events added to its session: tracepoints ("system:name", with
 * their field tables and filters), software events by name, BPF output maps
 * (a map fd or a pin path). Types are checked here (TypeError); the
 * library's refusals raise perfring.Error with its sentence. */
#include "py.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const software[] = {
	[PERFRING_SW_CPU_CLOCK] = "cpu-clock",
	[PERFRING_SW_TASK_CLOCK] = "task-clock",
	[PERFRING_SW_CONTEXT_SWITCHES] = "context-switches",
	[PERFRING_SW_PAGE_FAULTS] = "page-faults",
	[PERFRING_SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERFRING_SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERFRING_SW_CPU_MIGRATIONS] = "cpu-migrations",
};

static int keep(pr_core *c, pr_event *e)
{
	int r;

	if (!e)
		return -1;
	r = PyList_Append(c->events, (PyObject *)e);
	Py_DECREF(e);
	return r;
}

static const char *str_item(PyObject *v, const char *what)
{
	const char *s;
	Py_ssize_t n;

	if (!PyUnicode_Check(v)) {
		PyErr_Format(PyExc_TypeError, "each of %s must be a str, not %.80s", what,
			     Py_TYPE(v)->tp_name);
		return NULL;
	}
	if (!(s = PyUnicode_AsUTF8AndSize(v, &n)))
		return NULL;
	if (!n || strlen(s) != (size_t)n) {
		PyErr_Format(PyExc_ValueError, "%s: %R is empty or holds a NUL", what, v);
		return NULL;
	}
	return s;
}

static int add_tracepoint(pr_core *c, const char *full)
{
	struct perfring_event *ev;
	char *sys = strdup(full), *name;
	pr_event *e = NULL;
	int err;

	if (!sys) {
		PyErr_NoMemory();
		return -1;
	}
	name = strchr(sys, ':');
	*name++ = '\0';
	if (!*sys || !*name) {
		PyErr_Format(PyExc_ValueError, "event '%s': give 'system:name', e.g. "
			     "'syscalls:sys_enter_getpid'", full);
		free(sys);
		return -1;
	}
	err = perfring_session_add_tracepoint(c->s, sys, name, &ev);
	if (err)
		pr_py_raise_session(err, c->s);
	else if (!(e = pr_event_new(full, ev)))
		err = -ENOMEM;
	else if ((err = pr_event_fields(e, sys, name))) {
		Py_CLEAR(e);
		if (!PyErr_Occurred())
			pr_py_raise(err, "the tracepoint's format file could not be read");
	}
	free(sys);
	return err ? -1 : keep(c, e);
}

static int add_software(pr_core *c, const char *name)
{
	struct perfring_event *ev;
	size_t k;
	int err;

	for (k = 0; k < sizeof(software) / sizeof(software[0]); k++)
		if (!strcmp(name, software[k]))
			break;
	if (k == sizeof(software) / sizeof(software[0])) {
		PyErr_Format(PyExc_ValueError, "unknown software event '%s': one of cpu-clock, "
			     "task-clock, context-switches, page-faults, minor-faults, "
			     "major-faults, cpu-migrations", name);
		return -1;
	}
	if ((err = perfring_session_add_software(c->s, (enum perfring_software)k, 1, &ev))) {
		pr_py_raise_session(err, c->s);
		return -1;
	}
	return keep(c, pr_event_new(name, ev));
}

/* Each of seq (a list or tuple of str, or None) through fn. */
static int each(pr_core *c, PyObject *seq, const char *what, int (*fn)(pr_core *, const char *))
{
	Py_ssize_t i;
	const char *s;

	if (seq == Py_None)
		return 0;
	if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
		PyErr_Format(PyExc_TypeError, "%s must be a list of str, not %.80s", what,
			     Py_TYPE(seq)->tp_name);
		return -1;
	}
	for (i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
		if (!(s = str_item(PySequence_Fast_GET_ITEM(seq, i), what)) || fn(c, s) < 0)
			return -1;
	return 0;
}

static int tracepoint_or_software(pr_core *c, const char *name)
{
	return strchr(name, ':') ? add_tracepoint(c, name) : add_software(c, name);
}

static int set_filters(pr_core *c, PyObject *filters)
{
	Py_ssize_t pos = 0, i, n;
	PyObject *k, *v;
	const char *f;
	pr_event *e;
	int err;

	if (filters == Py_None)
		return 0;
	if (!PyDict_Check(filters)) {
		PyErr_Format(PyExc_TypeError, "filters must be a dict of event name to filter "
			     "string, not %.80s", Py_TYPE(filters)->tp_name);
		return -1;
	}
	while (PyDict_Next(filters, &pos, &k, &v)) {
		if (!PyUnicode_Check(k) || !PyUnicode_Check(v)) {
			PyErr_SetString(PyExc_TypeError, "filters must map str to str");
			return -1;
		}
		for (i = 0, e = NULL; i < PyList_GET_SIZE(c->events); i++, e = NULL) {
			e = (pr_event *)PyList_GET_ITEM(c->events, i);
			if (PyUnicode_Compare(e->name, k) == 0)
				break;
		}
		if (!e) {
			PyErr_Format(PyExc_ValueError, "filters: %R is not one of the events", k);
			return -1;
		}
		if (!(f = PyUnicode_AsUTF8AndSize(v, &n)))
			return -1;
		if (strlen(f) != (size_t)n) {
			PyErr_Format(PyExc_ValueError, "filters: the filter of %R holds a NUL", k);
			return -1;
		}
		if ((err = perfring_event_set_filter(e->ev, f))) {
			pr_py_raise_session(err, c->s);
			return -1;
		}
	}
	return 0;
}

int pr_core_add_events(pr_core *c, PyObject *events, PyObject *softw, PyObject *filters)
{
	if (each(c, events, "events", tracepoint_or_software) < 0 ||
	    each(c, softw, "software", add_software) < 0)
		return -1;
	return set_filters(c, filters);
}

/* A map: an int fd (borrowed) or a pin path (opened here: *owned). */
static int map_fd(PyObject *v, const char *what, bool *owned)
{
	union bpf_attr a;
	const char *path;
	Py_ssize_t n;
	long fd;

	*owned = false;
	if (PyLong_Check(v) && !PyBool_Check(v)) {
		fd = PyLong_AsLong(v);
		if (fd == -1 && PyErr_Occurred())
			return -1;
		if (fd < 0 || fd > INT32_MAX) {
			PyErr_Format(PyExc_ValueError, "%s: a map fd must be >= 0", what);
			return -1;
		}
		return (int)fd;
	}
	if (!PyUnicode_Check(v)) {
		PyErr_Format(PyExc_TypeError, "%s must be a map fd (int) or a pin path (str), "
			     "not %.80s", what, Py_TYPE(v)->tp_name);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	if (!(path = PyUnicode_AsUTF8AndSize(v, &n)))
		return -1;
	if (!n || strlen(path) != (size_t)n) {
		PyErr_Format(PyExc_ValueError, "%s: the pin path is empty or holds a NUL", what);
		return -1;
	}
	a.pathname = (uint64_t)(uintptr_t)path;
	fd = syscall(__NR_bpf, BPF_OBJ_GET, &a, sizeof(a));
	if (fd < 0) {
		int err = errno;
		char msg[512];

		snprintf(msg, sizeof(msg), "%s: the pinned map %s could not be opened (BPF_OBJ_GET: %s)",
			 what, path, strerror(err));
		pr_py_raise(-err, msg);
		return -1;
	}
	*owned = true;
	return (int)fd;
}

static int add_output(pr_core *c, PyObject *v)
{
	struct perfring_event *ev;
	bool owned;
	int fd = map_fd(v, "bpf_output", &owned), err;

	if (fd < 0)
		return -1;
	err = perfring_session_add_bpf_output(c->s, fd, &ev);
	if (owned)
		close(fd);
	if (err) {
		pr_py_raise_session(err, c->s);
		return -1;
	}
	return keep(c, pr_event_new("bpf_output", ev));
}

static int add_ringbuf(pr_core *c, PyObject *v)
{
	bool owned;
	int fd, err;

	if (!pr_ringbuf_available()) {
		pr_py_raise(-EOPNOTSUPP, "bpf_ringbuf: this libperfring has no "
			    "perfring_session_add_bpf_ringbuf");
		return -1;
	}
	if ((fd = map_fd(v, "bpf_ringbuf", &owned)) < 0)
		return -1;
	err = pr_ringbuf_add(c, fd);
	if (owned)
		close(fd);
	return err;
}

/* None, one map, or a list of maps. */
static int each_map(pr_core *c, PyObject *v, int (*fn)(pr_core *, PyObject *))
{
	Py_ssize_t i;

	if (v == Py_None)
		return 0;
	if (!PyList_Check(v) && !PyTuple_Check(v))
		return fn(c, v);
	for (i = 0; i < PySequence_Fast_GET_SIZE(v); i++)
		if (fn(c, PySequence_Fast_GET_ITEM(v, i)) < 0)
			return -1;
	return 0;
}

int pr_core_add_bpf(pr_core *c, PyObject *outputs, PyObject *ringbufs)
{
	if (each_map(c, outputs, add_output) < 0)
		return -1;
	return each_map(c, ringbufs, add_ringbuf);
}
