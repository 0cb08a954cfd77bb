/* SPDX-License-Identifier: MIT */
/* BPF ring buffers (BPF_MAP_TYPE_RINGBUF): each added map is a source of
 * samples beside the perf rings, read through the session's own dup of its
 * fd. Mapped at start, unmapped before the rings close. The timed ones are
 * leaves of the session's merge, which drains them in every merged parse;
 * the tick drains the others for parse_all and the sleep-polling wait; a
 * reactor watches each as a slot (loop/ringbuf.c). */
#include "feature.h"
#include "session.h"
#include "features/bpf_ringbuf.h"
#include "kernel/bpfmap.h"
#include "read/merge.h"
#include "read/ringbuf.h"
#include "base/sys.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One ring buffer: its reader, and what start maps. */
struct rbsrc {
	struct pr_rbuf rb;
	uint32_t id, max_entries;
};

struct pr_ringbufs {
	struct pr_rbuf **rb;        /* n, in the order added */
	uint32_t n;
	bool merged;                /* the merge drains the timed ones */
};

static struct rbsrc *src_of(struct pr_rbuf *rb)
{
	return (struct rbsrc *)((char *)rb - offsetof(struct rbsrc, rb));
}

size_t pr_ringbuf_count(const struct perfring_session *s)
{
	return s->rbs ? s->rbs->n : 0;
}

struct pr_rbuf *pr_ringbuf_at(const struct perfring_session *s, size_t k)
{
	return s->rbs->rb[k];
}

bool pr_ringbuf_merged(const struct perfring_session *s, const struct pr_rbuf *rb)
{
	return s->rbs && s->rbs->merged && rb->timed;
}

int pr_ringbuf_error(struct perfring_session *s, const struct pr_rbuf *rb, int err)
{
	if (err == -EBUSY)
		return pr_err(&s->err, err, "%s is being parsed already (by a callback of that "
			      "parse, or by another thread): one parse of a ring buffer at a "
			      "time", rb->ev->name);
	if (err == -EIO)
		return pr_err(&s->err, err, "%s holds a record header that cannot be right (a "
			      "length beyond what the producer wrote or the ring's size): it is "
			      "read no further", rb->ev->name);
	return pr_err(&s->err, err, "reading %s: %s", rb->ev->name, perfring_strerror(err));
}

static int check_opts(struct perfring_session *s, const struct perfring_ringbuf_opts *in,
		      struct perfring_ringbuf_opts *o)
{
	int err = pr_opts_copy(&s->err, "perfring_ringbuf_opts", o, sizeof(*o), sizeof(*o), in);

	if (err)
		return err;
	if (o->flags & ~PERFRING_RINGBUF_TIME)
		return pr_err(&s->err, -EINVAL, "perfring_ringbuf_opts.flags = %#x: only "
			      "PERFRING_RINGBUF_TIME is defined", o->flags);
	if (o->time_offset && !(o->flags & PERFRING_RINGBUF_TIME))
		return pr_err(&s->err, -EINVAL, "perfring_ringbuf_opts.time_offset is %u without "
			      "PERFRING_RINGBUF_TIME: set the flag, or leave time_offset 0",
			      o->time_offset);
	return 0;
}

/* A record is at most the ring's size less its 8-byte header. */
static int check_offset(struct perfring_session *s, const struct perfring_ringbuf_opts *o,
			const struct pr_bpfmap_info *info)
{
	if (!(o->flags & PERFRING_RINGBUF_TIME) ||
	    (uint64_t)o->time_offset + 16 <= info->max_entries)
		return 0;
	return pr_err(&s->err, -EINVAL, "perfring_ringbuf_opts.time_offset is %u, but map %u "
		      "(\"%.16s\") holds %u bytes: no record of it reaches a u64 at that offset",
		      o->time_offset, info->id, info->name, info->max_entries);
}

/* Two readers of one ring buffer would move one consumer position. */
static int check_map_free(struct perfring_session *s, const struct pr_bpfmap_info *info)
{
	uint32_t k;

	for (k = 0; s->rbs && k < s->rbs->n; k++)
		if (src_of(s->rbs->rb[k])->id == info->id)
			return pr_err(&s->err, -EEXIST, "add_bpf_ringbuf: the session already reads "
				      "map %u (%s): a ring buffer has one consumer position, so one "
				      "reader", info->id, s->rbs->rb[k]->ev->name);
	return 0;
}

/* Room for one more in s's list, made on the first add. */
static int make_room(struct perfring_session *s)
{
	struct pr_rbuf **rb;

	if (!s->rbs && !(s->rbs = pr_calloc(1, sizeof(*s->rbs))))
		return pr_err(&s->err, -ENOMEM, "out of memory adding a ring buffer");
	rb = pr_realloc(s->rbs->rb, (s->rbs->n + 1) * sizeof(*rb));
	if (!rb)
		return pr_err(&s->err, -ENOMEM, "out of memory adding a ring buffer");
	s->rbs->rb = rb;
	return 0;
}

/* src (with its dup) becomes the event's reader, or is released. */
static int add_source(struct perfring_session *s, struct rbsrc *src, const char *name,
		      struct perfring_event **out)
{
	struct perfring_event *ev;
	int err;

	if ((err = make_room(s)) || (err = pr_add_source(&s->reg, PR_EV_RINGBUF, name, &ev))) {
		close(src->rb.map_fd);
		free(src);
		return err;
	}
	ev->rbuf = &src->rb;
	src->rb.ev = ev;
	s->rbs->rb[s->rbs->n++] = &src->rb;
	if (out)
		*out = ev;
	return 0;
}

PERFRING_API int perfring_session_add_bpf_ringbuf(struct perfring_session *s, int map_fd,
						  const struct perfring_ringbuf_opts *opts,
						  struct perfring_event **out)
{
	struct perfring_ringbuf_opts o;
	struct pr_bpfmap_info info;
	struct rbsrc *src;
	char name[64];
	int err;

	if (!s)
		return pr_null(NULL, __func__, "s");
	if (s->reg.frozen)
		return pr_err(&s->err, -EBUSY, "add_bpf_ringbuf: ring buffers can only be added "
			      "before perfring_session_start");
	if ((err = check_opts(s, opts, &o)) || (err = pr_bpfmap_check_ringbuf(map_fd, &info, &s->err)) ||
	    (err = check_offset(s, &o, &info)) || (err = check_map_free(s, &info)))
		return err;
	if (!(src = pr_calloc(1, sizeof(*src))))
		return pr_err(&s->err, -ENOMEM, "out of memory adding a ring buffer");
	/* Our own fd: the caller may close theirs once this returns. */
	if ((src->rb.map_fd = pr_dup(map_fd)) < 0) {
		err = errno;
		free(src);
		return pr_err(&s->err, -err, "add_bpf_ringbuf: fcntl(F_DUPFD_CLOEXEC) of map_fd "
			      "%d: %s", map_fd, perfring_strerror(-err));
	}
	src->id = info.id;
	src->max_entries = info.max_entries;
	src->rb.timed = (o.flags & PERFRING_RINGBUF_TIME) != 0;
	src->rb.time_offset = o.time_offset;
	snprintf(name, sizeof(name), "ringbuf:%.16s(map %u)", info.name, info.id);
	return add_source(s, src, name, out);
}

static void unmap(struct perfring_session *s)
{
	uint32_t k;

	for (k = 0; s->rbs && k < s->rbs->n; k++)
		pr_rb_unmap(&s->rbs->rb[k]->map);
	if (s->rbs)
		s->rbs->merged = false;
}

static int map_one(struct perfring_session *s, struct rbsrc *src)
{
	int err = pr_rb_map(&src->rb.map, src->rb.map_fd, src->max_entries);

	if (!err)
		return 0;
	return pr_err(&s->err, err, "perfring_session_start: mapping %s (%u bytes, mapped "
		      "twice after its producer page): mmap: %s%s", src->rb.ev->name,
		      src->max_entries, perfring_strerror(err),
		      err == -EPERM || err == -EACCES ? "; the consumer page needs a read-write "
		      "fd of a map that is not frozen" : "");
}

/* The timed ring buffers become leaves of the session's merge: merged
 * parses deliver their records in time order with the rings'. */
static int give_merge(struct perfring_session *s)
{
	struct pr_rbuf **timed = pr_calloc(s->rbs->n, sizeof(*timed));
	uint32_t k, n = 0;
	int err;

	if (!timed)
		return pr_err(&s->err, -ENOMEM, "out of memory merging the ring buffers");
	for (k = 0; k < s->rbs->n; k++)
		if (s->rbs->rb[k]->timed)
			timed[n++] = s->rbs->rb[k];
	err = n ? pr_merge_set_ringbufs(s->merge, timed, n) : 0;
	free(timed);
	if (err)
		return pr_err(&s->err, err, "out of memory merging %u timed ring buffers", n);
	s->rbs->merged = n > 0;
	return 0;
}

/* Maps every ring buffer; on failure those mapped are unmapped. */
static int started(struct perfring_session *s)
{
	uint32_t k;
	int err = 0;

	for (k = 0; s->rbs && k < s->rbs->n && !err; k++)
		err = map_one(s, src_of(s->rbs->rb[k]));
	if (!err && s->rbs)
		err = give_merge(s);
	if (err)
		unmap(s);
	return err;
}

/* parse_all and the sleep-polling wait: every ring buffer the merge does
 * not drain, to its end. */
static int tick(struct perfring_session *s)
{
	struct pr_rbuf *rb;
	bool stopped;
	uint32_t k;
	int n, total = 0;

	for (k = 0; s->rbs && k < s->rbs->n; k++) {
		rb = s->rbs->rb[k];
		if (pr_ringbuf_merged(s, rb))
			continue;
		n = pr_rbuf_drain(rb, 0, NULL, &stopped);
		if (pr_session_closing(s))
			return -ECANCELED;
		if (n < 0 && n != -EBUSY) /* -EBUSY: another parse reads it now (R1) */
			pr_ringbuf_error(s, rb, n);
		total += n > 0 ? n : 0;
	}
	return total;
}

static void fini(struct perfring_session *s)
{
	uint32_t k;

	if (!s->rbs)
		return;
	for (k = 0; k < s->rbs->n; k++) {
		pr_rb_unmap(&s->rbs->rb[k]->map);
		close(s->rbs->rb[k]->map_fd);
		free(src_of(s->rbs->rb[k]));
	}
	free(s->rbs->rb);
	free(s->rbs);
	s->rbs = NULL;
}

const struct pr_feature pr_feature_bpf_ringbuf = {
	.name = "bpf_ringbuf",
	.started = started,
	.unmap = unmap,
	.tick = tick,
	.fini = fini,
};

/* The session of a ring buffer's event, or the sentence why not. */
static int rbuf_of(const struct perfring_event *ev, const char *fn, struct perfring_session **s,
		   struct pr_rbuf **rb)
{
	if (!ev)
		return pr_null(NULL, fn, "ev");
	*s = (struct perfring_session *)((char *)ev->reg - offsetof(struct perfring_session, reg));
	if (ev->kind != PR_EV_RINGBUF)
		return pr_err(&(*s)->err, -EINVAL, "%s: %s is not a BPF ring buffer (see "
			      "perfring_session_add_bpf_ringbuf)", fn, ev->name);
	*rb = ev->rbuf;
	return 0;
}

PERFRING_API int perfring_ringbuf_fd(const struct perfring_event *ev)
{
	struct perfring_session *s = NULL;
	struct pr_rbuf *rb = NULL;
	int err = rbuf_of(ev, __func__, &s, &rb);

	if (err)
		return err;
	if (s->state == PR_NEW)
		return pr_err(&s->err, -ENOTCONN, "perfring_ringbuf_fd: %s is mapped at "
			      "perfring_session_start: watch its fd after that", ev->name);
	return rb->map_fd;
}

PERFRING_API int perfring_ringbuf_parse(struct perfring_event *ev, size_t max, bool *more)
{
	struct perfring_session *s = NULL;
	struct pr_rbuf *rb = NULL;
	bool stopped, left = false;
	int err = rbuf_of(ev, __func__, &s, &rb), n;

	if (more)
		*more = false;
	if (err)
		return err;
	if (s->state == PR_NEW)
		return pr_err(&s->err, -EINVAL, "perfring_ringbuf_parse: parse before "
			      "perfring_session_start");
	pr_session_enter(s);
	n = pr_rbuf_drain(rb, max, &left, &stopped);
	if (n < 0)
		pr_ringbuf_error(s, rb, n);
	if (pr_session_leave(s)) /* R7: freed inside a callback */
		return -ECANCELED;
	if (more)
		*more = n >= 0 && left;
	return n;
}

PERFRING_API int perfring_ringbuf_stats(const struct perfring_event *ev,
					struct perfring_ringbuf_stats *out)
{
	struct perfring_session *s = NULL;
	struct pr_rbuf *rb = NULL;
	int err = rbuf_of(ev, __func__, &s, &rb);

	if (err)
		return err;
	if (!out)
		return pr_null(&s->err, __func__, "out");
	pr_rbuf_stats_read(rb, out); /* each counter whole, from any thread (R8) */
	return 0;
}
