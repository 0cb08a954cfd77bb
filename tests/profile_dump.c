/* SPDX-License-Identifier: MIT */
/* libperfring's side of tests/profile_perf.py: the sample types `perf record
 * --call-graph dwarf,1024 -d -W --phys-data --data-page-size --code-page-size
 * --all-cgroups` asks for, on syscalls:sys_enter_getpid of process PID, one
 * line per sample as decoded by the library:
 *   tid time abi r0 r1 ... dyn_size weight data_src phys_addr cgroup dps cps
 * It prints "ready" once started and ends when PID has exited.
 * usage: profile_dump PID TRACEPOINT_ID */
#include <perfring/perfring.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define REGS_MASK 0xff0fffull   /* perf's x86-64 user register mask */
#define STACK 1024

static int on_sample(const struct perfring_sample *s, void *ctx)
{
	(void)ctx;
	printf("%u %" PRIu64 " %" PRIu64, s->tid, s->time, s->regs_user_abi);
	for (uint32_t i = 0; i < s->regs_user_nr; i++)
		printf(" %" PRIx64, s->regs_user[i]);
	printf(" %" PRIu64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64
	       "\n", s->stack_user_dyn_size, s->weight, s->data_src, s->phys_addr, s->cgroup,
	       s->data_page_size, s->code_page_size);
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT, .sample_period = 1, .exclude_callchain_user = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			       PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |
			       PERF_SAMPLE_WEIGHT_STRUCT,
		.sample_regs_user = REGS_MASK, .sample_stack_user = STACK,
	};
	struct perfring_opts o = { .sz = sizeof(o), .ring_pages = 256, .wakeup_watermark = 4096 };
	struct perfring_session *s = NULL;
	struct perfring_event *ev;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: profile_dump PID TRACEPOINT_ID\n");
		return 2;
	}
	o.pid = atoi(argv[1]);
	a.config = strtoull(argv[2], NULL, 10);
	if ((err = perfring_session_new(&o, &s)) ||
	    (err = perfring_session_add_attr(s, &a, &ev)) ||
	    (err = perfring_event_set_callback(ev, on_sample, NULL)) ||
	    (err = perfring_session_start(s))) {
		fprintf(stderr, "profile_dump: %s\n", perfring_session_last_error(s));
		perfring_session_free(s);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	err = perfring_session_parse_for_duration(s, 60ull * 1000000000);
	perfring_session_free(s);
	fflush(stdout);
	return err < 0;
}
