/* SPDX-License-Identifier: MIT */
/* An event's tracepoint fields, each looked up with perfring_event_field()
 * by the names bindings/common/tpfields.c lists. */
#include "pn.h"
#include "tpfields.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 256

static int add_field(void *ctx, const char *name)
{
	struct pn_event *e = ctx;
	struct pn_field *f = &e->fields[e->field_n];

	if (e->field_n == MAX_FIELDS)
		return 0;
	/* A field the library's own parser refused is left out, not guessed. */
	if (perfring_event_field(e->ev, name, &f->f))
		return 0;
	if (!(f->name = strdup(f->f.name)))
		return -ENOMEM;
	f->f.name = f->name;
	f->f.type = NULL;
	e->field_n++;
	return 0;
}

int pn_event_fields(struct pn_event *e, const char *system, const char *name)
{
	if (!(e->fields = calloc(MAX_FIELDS, sizeof(*e->fields))))
		return -ENOMEM;
	return pr_tp_fields(system, name, add_field, e);
}
