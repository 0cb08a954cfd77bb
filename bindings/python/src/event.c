/* SPDX-License-Identifier: MIT */
/* perfring._perfring.Event: an event's name and field table, one object per
 * event of a session, shared by all its samples. */
#include "py.h"

#include <stdlib.h>
#include <string.h>

pr_event *pr_event_new(const char *name, struct perfring_event *ev)
{
	pr_event *e = PyObject_New(pr_event, &pr_event_type);

	if (!e)
		return NULL;
	e->ev = ev;
	e->fields = NULL;
	e->field_n = 0;
	if (!(e->name = PyUnicode_FromString(name))) {
		Py_DECREF(e);
		return NULL;
	}
	PyUnicode_InternInPlace(&e->name);
	return e;
}

const struct pr_py_field *pr_event_field(const pr_event *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->field_n; i++)
		if (!strcmp(e->fields[i].f.name, name))
			return &e->fields[i];
	return NULL;
}

static void event_dealloc(pr_event *e)
{
	size_t i;

	for (i = 0; i < e->field_n; i++) {
		Py_XDECREF(e->fields[i].name);
		free(e->fields[i].cname);
		free(e->fields[i].ctype);
	}
	free(e->fields);
	Py_XDECREF(e->name);
	PyObject_Free(e);
}

static PyObject *event_repr(pr_event *e)
{
	return PyUnicode_FromFormat("<perfring event %R>", e->name);
}

static PyObject *event_fields(pr_event *e, void *closure)
{
	PyObject *t = PyTuple_New((Py_ssize_t)e->field_n);
	size_t i;

	(void)closure;
	for (i = 0; t && i < e->field_n; i++) {
		Py_INCREF(e->fields[i].name);
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, e->fields[i].name);
	}
	return t;
}

static PyObject *event_name(pr_event *e, void *closure)
{
	(void)closure;
	Py_INCREF(e->name);
	return e->name;
}

static PyGetSetDef event_getset[] = {
	{ "name", (getter)event_name, NULL, "the event's name", NULL },
	{ "fields", (getter)event_fields, NULL, "its tracepoint fields' names", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject pr_event_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perfring.Event",
	.tp_basicsize = sizeof(pr_event),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One event of a watch: its name and its tracepoint fields.",
	.tp_dealloc = (destructor)event_dealloc,
	.tp_repr = (reprfunc)event_repr,
	.tp_getset = event_getset,
};
