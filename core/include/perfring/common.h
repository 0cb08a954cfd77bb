/* SPDX-License-Identifier: MIT */
/*
 * libperfring's common part, included by every other: the export macro,
 * the version, the opaque types and the error calls.
 *
 * Conventions
 *  - Functions returning int give 0 (or a count) on success and a negative
 *    errno on failure; perfring_strerror() turns one into text and
 *    perfring_session_last_error() gives a sentence with the cause and fix.
 *  - Options structs begin with `size_t sz` = sizeof(the struct). A zeroed
 *    field means its default. A larger struct from a newer header is accepted
 *    when its unknown tail is zero, else -E2BIG.
 *  - Objects are opaque and owned by the library. No call of the API is safe
 *    on one session from two threads at once, except parse_for_cpu (and its
 *    budgeted and pull forms) on *different* CPUs, and cpu_stats (R8).
 *  - R1: one parse of a ring at a time. A parse of a CPU's ring (parse_for_cpu,
 *    parse_for_cpu_n, cpu_next/commit, or a merged parse, which takes every
 *    ring) that starts while another parse of that ring runs, from one of its
 *    callbacks or from another thread, returns -EBUSY at once and delivers
 *    nothing; the running parse is not disturbed. One atomic claim per call.
 *  - R1-R13, cited throughout: docs/RULES.md. Measured costs and the kernel
 *    behaviour behind some rules: docs/API-NOTES.md.
 */
#ifndef PERFRING_COMMON_H
#define PERFRING_COMMON_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(PERFRING_BUILDING)
#define PERFRING_API __attribute__((visibility("default")))
#else
#define PERFRING_API
#endif

/** Version of the library: major * 10000 + minor * 100 + patch. */
#define PERFRING_VERSION 100
/** Returns PERFRING_VERSION of the library actually loaded. */
PERFRING_API int perfring_version(void);

/** Pass as flush_ms to never drain on a timer (only kernel wakeups drain). */
#define PERFRING_FLUSH_NEVER UINT32_MAX

struct perfring_session;
struct perfring_event;

/** Text for a negative errno returned by this library (never NULL). */
PERFRING_API const char *perfring_strerror(int err);

/** A sentence about the last failure on this session: the CPU, event and
 *  syscall involved, and the fix. With s == NULL: the last failure of a call
 *  on this thread that had no session yet (perfring_session_new()), or of
 *  any call on this thread: threads that share a session read their own
 *  failures there. Never NULL; "" when there was none. Valid until the next
 *  failing call. */
PERFRING_API const char *perfring_session_last_error(const struct perfring_session *s);

#ifdef __cplusplus
}
#endif
#endif
