/* SPDX-License-Identifier: MIT */
/*
 * Shared by the synthetic benchmarks: pinning, timing, medians and the
 * report writer. Their synthetic sessions come from the test support
 * library (tests/support/synthsession.h).
 */
#ifndef PR_BENCH_BENCHUTIL_H
#define PR_BENCH_BENCHUTIL_H

#include "synthsession.h" /* -I$(top_srcdir)/tests/support */

#include <perfring/perfring.h>
#include <stdio.h>

/* Pins the calling thread to CPU 0; 0 or -errno. */
int bench_pin_cpu0(void);

/* This thread's CPU time in ns (see benchutil.c for why). */
uint64_t bench_now_ns(void);

/* Median of n values (sorts v). */
double bench_median(double *v, size_t n);

/*
 * Report: everything written with bench_out() goes to a buffer that
 * bench_out_close() prints to stdout and, when PERFRING_RESULTS names a file,
 * appends to it in one write (other benchmarks may append to the same file).
 * bench_out_open() starts with a markdown heading and the run's context: date,
 * kernel release, CPU model and the exact command line.
 */
int bench_out_open(const char *title, int argc, char **argv);
void bench_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_out_close(void);

#endif
