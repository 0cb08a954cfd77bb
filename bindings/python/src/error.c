/* SPDX-License-Identifier: MIT */
/* perfring.Error: an OSError with the errno and the library's sentence (or,
 * when it has none, the errno's text). */
#include "py.h"

PyObject *pr_py_error;

PyObject *pr_py_raise(int err, const char *sentence)
{
	PyObject *e;

	if (err < 0)
		err = -err;
	if (!sentence || !*sentence)
		sentence = perfring_strerror(-err);
	e = PyObject_CallFunction(pr_py_error, "is", err, sentence);
	if (e) {
		PyErr_SetObject(pr_py_error, e);
		Py_DECREF(e);
	}
	return NULL;
}

PyObject *pr_py_raise_session(int err, const struct perfring_session *s)
{
	return pr_py_raise(err, perfring_session_last_error(s));
}

int pr_py_error_init(PyObject *module)
{
	pr_py_error = PyErr_NewExceptionWithDoc(
		"perfring.Error",
		"A failure of libperfring: errno is the error number, strerror the "
		"library's sentence (the cause and the fix).",
		PyExc_OSError, NULL);
	if (!pr_py_error)
		return -1;
	Py_INCREF(pr_py_error);
	if (PyModule_AddObject(module, "Error", pr_py_error) < 0) {
		Py_DECREF(pr_py_error);
		return -1;
	}
	return 0;
}
