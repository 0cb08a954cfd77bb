/* SPDX-License-Identifier: MIT */
/* perfring._perfring: its types and perfring.Error. */
#include "py.h"

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "perfring._perfring",
	.m_doc = "libperfring's sessions for perfring.watch and perfring.Session.",
	.m_size = -1,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}

/* PyMODINIT_FUNC exports it (default visibility). */
PyMODINIT_FUNC PyInit__perfring(void);
PyMODINIT_FUNC PyInit__perfring(void)
{
	PyObject *m = PyModule_Create(&module);

	if (!m)
		return NULL;
	if (pr_py_error_init(m) < 0 || add_type(m, &pr_core_type, "Core") < 0 ||
	    add_type(m, &pr_sample_type, "Sample") < 0 || add_type(m, &pr_event_type, "Event") < 0 ||
	    PyModule_AddIntConstant(m, "ringbuf", pr_ringbuf_available()) < 0 ||
	    PyModule_AddIntConstant(m, "version", perfring_version()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
