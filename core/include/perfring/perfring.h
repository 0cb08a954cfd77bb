/* SPDX-License-Identifier: MIT */
/*
 * libperfring: read Linux perf_event ring buffers, one per CPU, and hand the
 * decoded records to callbacks, on whatever event loop the caller runs.
 *
 * The whole API. Each part can be read, and included, alone:
 *   <perfring/common.h>    conventions, version, errors, the opaque types
 *   <perfring/record.h>    samples, kernel records, tracepoint fields
 *   <perfring/session.h>   options, events, callbacks, start and stop
 *   <perfring/parse.h>     level 2 (per-CPU fds), the pull forms, stats,
 *                          CPU hotplug, level 1 (time-ordered parses)
 *   <perfring/recorder.h>  the flight recorder (overwrite rings, snapshots)
 *   <perfring/reactor.h>   the reactor and its loop drivers
 *   <perfring/bpf.h>       BPF output
 * R1-R13: docs/RULES.md. Measured costs and kernel notes: docs/API-NOTES.md.
 */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

#include <perfring/common.h>
#include <perfring/record.h>
#include <perfring/session.h>
#include <perfring/parse.h>
#include <perfring/recorder.h>
#include <perfring/reactor.h>
#include <perfring/bpf.h>

#endif
