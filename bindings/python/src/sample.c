/* SPDX-License-Identifier: MIT */
/* perfring.Sample: one sample of a batch. The header fields are copied; the
 * payload stays in the batch's bytes and its tracepoint fields are decoded
 * only when asked for (s["name"], s.fields), bounds-checked by the
 * library's field readers. */
#include "py.h"

#include <errno.h>

pr_sample *pr_sample_new(pr_event *e, const struct perfring_sample *s, PyObject *buf,
			 Py_ssize_t off)
{
	pr_sample *o = PyObject_New(pr_sample, &pr_sample_type);

	if (!o)
		return NULL;
	Py_INCREF(e);
	o->event = e;
	Py_XINCREF(buf);
	o->buf = buf;
	o->off = off;
	o->len = buf ? (Py_ssize_t)s->raw_size : 0;
	o->time = s->time;
	o->pid = s->pid;
	o->tid = s->tid;
	o->cpu = s->cpu;
	return o;
}

static void sample_dealloc(pr_sample *o)
{
	Py_DECREF(o->event);
	Py_XDECREF(o->buf);
	PyObject_Free(o);
}

/* A sample as the field readers take it: only the payload. */
static void payload(const pr_sample *o, struct perfring_sample *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (o->buf) {
		ps->raw = PyBytes_AS_STRING(o->buf) + o->off;
		ps->raw_size = (uint32_t)o->len;
	}
}

static PyObject *field_error(const pr_sample *o, const struct pr_py_field *f, int err)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s: field '%s' (%s, %u bytes at %u) %s",
		 PyUnicode_AsUTF8(o->event->name), f->f.name, f->f.type, f->f.size, f->f.offset,
		 err == -ERANGE ? "reads past the sample's payload" : "cannot be decoded");
	return pr_py_raise(err, msg);
}

static PyObject *decode(const pr_sample *o, const struct pr_py_field *f)
{
	struct perfring_sample ps;
	const void *data;
	const char *str;
	size_t len;
	uint64_t u;
	int64_t i;
	int err;

	payload(o, &ps);
	if (f->f.flags & PERFRING_FIELD_STRING) {
		if ((err = perfring_field_str(&f->f, &ps, &str, &len)))
			return field_error(o, f, err);
		return PyUnicode_DecodeUTF8(str, (Py_ssize_t)len, "backslashreplace");
	}
	if (!(f->f.flags & (PERFRING_FIELD_ARRAY | PERFRING_FIELD_DATA_LOC |
			    PERFRING_FIELD_REL_LOC)) &&
	    (f->f.size == 1 || f->f.size == 2 || f->f.size == 4 || f->f.size == 8)) {
		if (f->f.flags & PERFRING_FIELD_SIGNED) {
			if ((err = perfring_field_int(&f->f, &ps, &i)))
				return field_error(o, f, err);
			return PyLong_FromLongLong((long long)i);
		}
		if ((err = perfring_field_uint(&f->f, &ps, &u)))
			return field_error(o, f, err);
		return PyLong_FromUnsignedLongLong((unsigned long long)u);
	}
	if ((err = perfring_field_array(&f->f, &ps, &data, &len)))
		return field_error(o, f, err);
	return PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
}

static PyObject *sample_getitem(pr_sample *o, PyObject *key)
{
	const struct pr_py_field *f;
	const char *name;

	if (!PyUnicode_Check(key))
		return PyErr_Format(PyExc_TypeError, "a sample's field name must be a str, not %.80s",
				    Py_TYPE(key)->tp_name);
	if (!(name = PyUnicode_AsUTF8(key)))
		return NULL;
	if (!(f = pr_event_field(o->event, name)))
		return PyErr_Format(PyExc_KeyError, "%U has no field %R", o->event->name, key);
	return decode(o, f);
}

static PyObject *sample_fields(pr_sample *o, void *closure)
{
	PyObject *d = PyDict_New(), *v;
	size_t i;

	(void)closure;
	for (i = 0; d && i < o->event->field_n; i++) {
		if (!(v = decode(o, &o->event->fields[i])) ||
		    PyDict_SetItem(d, o->event->fields[i].name, v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(v);
	}
	return d;
}

static PyObject *sample_raw(pr_sample *o, void *closure)
{
	(void)closure;
	if (!o->buf)
		return PyBytes_FromStringAndSize("", 0);
	return PyBytes_FromStringAndSize(PyBytes_AS_STRING(o->buf) + o->off, o->len);
}

static PyObject *sample_event(pr_sample *o, void *closure)
{
	(void)closure;
	Py_INCREF(o->event->name);
	return o->event->name;
}

static PyObject *sample_cpu(pr_sample *o, void *closure)
{
	(void)closure;
	return PyLong_FromLong(o->cpu);
}

static PyObject *sample_pid(pr_sample *o, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(o->pid);
}

static PyObject *sample_tid(pr_sample *o, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(o->tid);
}

static PyObject *sample_time(pr_sample *o, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(o->time);
}

static PyObject *sample_repr(pr_sample *o)
{
	return PyUnicode_FromFormat("<perfring.Sample %U cpu=%d pid=%u tid=%u time=%llu>",
				    o->event->name, o->cpu, o->pid, o->tid,
				    (unsigned long long)o->time);
}

static PyGetSetDef sample_getset[] = {
	{ "event", (getter)sample_event, NULL, "the event's name, e.g. 'sched:sched_switch'", NULL },
	{ "cpu", (getter)sample_cpu, NULL, "the CPU whose ring it came from (-1: a BPF ring buffer)", NULL },
	{ "pid", (getter)sample_pid, NULL, "the process id", NULL },
	{ "tid", (getter)sample_tid, NULL, "the thread id", NULL },
	{ "time", (getter)sample_time, NULL, "CLOCK_MONOTONIC, in ns", NULL },
	{ "raw", (getter)sample_raw, NULL, "the payload (a tracepoint's or BPF program's bytes)", NULL },
	{ "fields", (getter)sample_fields, NULL, "every tracepoint field, decoded, as a dict", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMappingMethods sample_mapping = {
	.mp_subscript = (binaryfunc)sample_getitem,
};

PyTypeObject pr_sample_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfring.Sample",
	.tp_basicsize = sizeof(pr_sample),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One sample: event, cpu, pid, tid, time, raw; s['field'] and s.fields "
		  "decode a tracepoint's fields when read.",
	.tp_dealloc = (destructor)sample_dealloc,
	.tp_repr = (reprfunc)sample_repr,
	.tp_as_mapping = &sample_mapping,
	.tp_getset = sample_getset,
};
