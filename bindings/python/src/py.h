/* SPDX-License-Identifier: MIT */
/* perfring._perfring: the C side of the Python module. A Core is one
 * session read as a level-2 loop of the caller's own (Python's asyncio or
 * selectors): its rings' fds, a batch pull per CPU into Sample objects, its
 * stats. An Event holds one event's name and field table, shared by its
 * Samples, which decode fields lazily from their batch's bytes. */
#ifndef PR_PY_H
#define PR_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <perfring/perfring.h>
#include <stdbool.h>
#include <stdint.h>

#include "spawn.h"

/* Python's method tables take PyCFunction; a keywords method is cast
 * through void (*)(void), which -Wcast-function-type accepts. */
#define PR_KW_METHOD(fn) ((PyCFunction)(void (*)(void))(fn))

extern PyObject *pr_py_error;   /* perfring.Error, an OSError subclass */
extern PyTypeObject pr_core_type, pr_sample_type, pr_event_type;

/* One tracepoint field, its name as a str for fields(); f.name and f.type
 * point to the copies cname and ctype. */
struct pr_py_field {
	struct perfring_field f;
	PyObject *name;
	char *cname, *ctype;
};

/* The name of an event and what decoding its samples needs. */
typedef struct {
	PyObject_HEAD
	PyObject *name;                /* "sched:sched_switch", "page-faults" */
	struct perfring_event *ev;     /* owned by the Core's session */
	struct pr_py_field *fields;
	size_t field_n;
} pr_event;

/* One sample: its header fields, and its raw payload as a slice of the
 * bytes object its pull copied every payload of the batch into. */
typedef struct {
	PyObject_HEAD
	pr_event *event;
	PyObject *buf;                 /* bytes, or NULL for no payload */
	Py_ssize_t off, len;
	uint64_t time;
	uint32_t pid, tid;
	int cpu;
} pr_sample;

typedef struct {
	PyObject_HEAD
	struct perfring_session *s;
	PyObject *events;              /* list of pr_event, in the session's order */
	PyObject *ringbufs;            /* list of pr_event of BPF ring buffers */
	struct perfring_item *items;   /* the pull's array */
	PyObject *rb_batch;            /* ring buffer records of the parse running */
	PyObject *cb_batch;            /* samples of the hotplug sync running */
	struct pr_spawn child;         /* command=: the child, pid -1 without one */
	bool started;
	bool closed;
	bool follow;                   /* follow_hotplug */
} pr_core;

/* error.c: raise perfring.Error(errno, sentence); return NULL. */
PyObject *pr_py_raise(int err, const char *sentence);
PyObject *pr_py_raise_session(int err, const struct perfring_session *s);
int pr_py_error_init(PyObject *module);

/* event.c */
pr_event *pr_event_new(const char *name, struct perfring_event *ev);
const struct pr_py_field *pr_event_field(const pr_event *e, const char *name);

/* format.c: the event's tracepoint fields, from tracefs's format file. */
int pr_event_fields(pr_event *e, const char *system, const char *name);

/* sample.c */
pr_sample *pr_sample_new(pr_event *e, const struct perfring_sample *s, PyObject *buf,
			 Py_ssize_t off);

/* add.c: the events of Core(...) added to its session. */
int pr_core_add_events(pr_core *c, PyObject *events, PyObject *software, PyObject *filters);
int pr_core_add_bpf(pr_core *c, PyObject *outputs, PyObject *ringbufs);

/* pull.c */
pr_event *pr_core_event(pr_core *c, const struct perfring_event *ev);
PyObject *pr_core_pull(pr_core *c, PyObject *args);
PyObject *pr_core_pull_all(pr_core *c, PyObject *noarg);
PyObject *pr_core_hup(pr_core *c, PyObject *args);

/* ringbuf.c */
int pr_ringbuf_available(void);
PyObject *pr_core_ringbuf_fds(pr_core *c, PyObject *noarg);
PyObject *pr_core_ringbuf_pull(pr_core *c, PyObject *args);
int pr_ringbuf_add(pr_core *c, int fd);

/* hotplug.c */
int pr_hotplug_prepare(pr_core *c);
PyObject *pr_core_hotplug_fd(pr_core *c, PyObject *noarg);
PyObject *pr_core_hotplug_sync(pr_core *c, PyObject *noarg);

/* core.c helpers */
int pr_core_check(pr_core *c, bool started);

#endif
