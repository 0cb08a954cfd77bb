/* SPDX-License-Identifier: MIT */
/* An event's tracepoint fields, each looked up with perfring_event_field()
 * by the names bindings/common/tpfields.c lists. */
#include "py.h"
#include "tpfields.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 256

static int add_field(void *ctx, const char *name)
{
	pr_event *e = ctx;
	struct pr_py_field *f = &e->fields[e->field_n];

	if (e->field_n == MAX_FIELDS)
		return 0;
	/* A field the library's own parser refused is left out, not guessed. */
	if (perfring_event_field(e->ev, name, &f->f))
		return 0;
	/* The library's strings die with the session; samples outlive it. */
	if (!(f->f.name = f->cname = strdup(f->f.name)) ||
	    !(f->f.type = f->ctype = strdup(f->f.type)) ||
	    !(f->name = PyUnicode_FromString(f->cname))) {
		free(f->cname);
		free(f->ctype);
		memset(f, 0, sizeof(*f));
		return -ENOMEM;
	}
	e->field_n++;
	return 0;
}

/* Called with the GIL held. */
int pr_event_fields(pr_event *e, const char *system, const char *name)
{
	if (!(e->fields = calloc(MAX_FIELDS, sizeof(*e->fields))))
		return -ENOMEM;
	return pr_tp_fields(system, name, add_field, e);
}
