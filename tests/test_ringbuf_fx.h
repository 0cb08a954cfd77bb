/* SPDX-License-Identifier: MIT */
/* The ring buffer session tests' fixture (tests/test_ringbuf_*.c): one of
 * tests/kbpf.c's ring-buffer programs for this process, a session reading
 * its map, and a callback that checks every record it is given. */
#ifndef TEST_RINGBUF_FX_H
#define TEST_RINGBUF_FX_H

#include "kbpf.h"

#include <perfring/perfring.h>
#include <stdbool.h>
#include <stdint.h>

/* Every sample of a ring buffer: raw_size the record's exact size, the
 * program's record (magic, tgid, tid, zero padding), cpu -1, pid and tid 0,
 * time the record's ns when timed (else 0), ns within [t0, t1] (t1 0:
 * open), and ns not going back (one thread makes the calls). */
struct rbcheck {
	uint32_t size, tgid, tid;
	bool timed;
	uint64_t t0, t1;
	uint64_t n, bad, last_ns;
	const struct perfring_event *ev;  /* NULL: any */
	char first_bad[200];
};
int rbcheck_cb(const struct perfring_sample *s, void *ctx);

struct rbfx {
	struct kbpf_rb b;
	struct rbcheck c;
	struct perfring_session *s;
	struct perfring_event *ev;
	uint32_t ids[3];
};

/* The program (mode, a ring of ring bytes, records of rec bytes), and a
 * session of o (NULL: defaults) with the map added with ro, checked by f->c;
 * started when start. Skips when BPF is unavailable. */
void rbfx_open(struct rbfx *f, enum kbpf_rb_mode mode, uint32_t ring, uint32_t rec,
	       const struct perfring_opts *o, const struct perfring_ringbuf_opts *ro, bool start);
/* n getpid calls, with the check's times around them. */
void rbfx_calls(struct rbfx *f, long n);
/* Exactly want records, every one right, and the stats saying so. */
void rbfx_expect(const struct rbfx *f, uint64_t want);
/* Frees the session (if any), closes the program, and expects its BPF
 * objects gone. */
void rbfx_close(struct rbfx *f);

/* The process's open fds, for "nothing left after free". */
int rbfx_fd_count(void);

#endif
