/* SPDX-License-Identifier: MIT */
/* perfring-watch: the command line. Only syntax is checked here; what the
 * session itself validates (ring size, watermark, wakeup modes, offline CPUs,
 * unknown tracepoints) is left to it so its sentence reaches the user. */
#include "config.h"
#include "watch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CPU_NUM 65535

static const char usage_text[] =
"usage: perfring-watch [-e SYSTEM:NAME [--filter EXPR]]... [-s SOFTWARE[:PERIOD]]...\n"
"                      [-c CPUS] [-p PID | [--] COMMAND [ARGS...]]\n"
"                      [--loop uv|event|ev|epoll] [--watermark BYTES | --wakeup-events N]\n"
"                      [--flush-ms MS] [--budget N] [--pages N] [-d SECONDS]\n"
"                      [--by SYSTEM:NAME:FIELD]... [--top N] [--max-series N]\n"
"                      [--json [--dump [--dump-bytes N]] | --print [--order-window MS]]\n"
"                      [--listen ADDR:PORT]\n"
"                      [--bpf-map PIN_PATH]...\n"
"                      [-u PATH:SYMBOL[%return]]... [--cgroup PATH] [--profile HZ]\n"
"       perfring-watch --overwrite [--snapshot-on SIGUSR2] [--snapshot-dir DIR]\n"
"                      [--snapshot-wait grace|visit] [--json]\n"
"                      [-e ...] [-s ...] [-c CPUS] [-p PID | COMMAND] [--pages N] [-d S]\n"
"\n"
"Shows, once a second and per CPU, how perf_event rings are delivered: events/s,\n"
"bytes/s, kernel wakeups/s, records per wakeup, lost records, ring fill and the\n"
"p50/p99 delivery latency (CLOCK_MONOTONIC at the callback minus the sample time).\n"
"With no arguments (as root) it watches sched:sched_switch on every online CPU.\n"
"\n"
"Events (default: -e sched:sched_switch):\n"
"  -e, --event SYSTEM:NAME       a tracepoint (see /sys/kernel/tracing/events)\n"
"      --filter EXPR             the kernel's filter for the -e just before, such\n"
"                                as 'common_pid == 123' (tracefs filter syntax)\n"
"  -s, --software NAME[:PERIOD]  a software event: cpu-clock, task-clock,\n"
"                                context-switches, page-faults, minor-faults,\n"
"                                major-faults, cpu-migrations; PERIOD = sample every\n"
"                                PERIOD events (ns for the clocks; default 1,\n"
"                                1000000 for the clocks)\n"
"      --bpf-map PIN_PATH        a BPF map pinned on bpffs (bpftool map pin,\n"
"                                bpf_obj_pin), either kind: a PERF_EVENT_ARRAY\n"
"                                (bpf_perf_event_output, into this tool's rings)\n"
"                                or a RINGBUF (bpf_ringbuf_output/reserve, a row\n"
"                                of its own); repeatable\n"
"  -u, --uprobe PATH:SYMBOL[%return]  a uprobe on the ELF file's function (its\n"
"                                entry, or its return with %return), through the\n"
"                                uprobe PMU: nothing is written to tracefs\n"
"      --profile HZ              cpu-clock sampling at HZ with callchains; the view\n"
"                                adds the top 10 user instruction pointers of\n"
"                                each second as PATH+0xOFFSET (from MMAP2 records)\n"
"What to watch:\n"
"  -c, --cpus LIST               CPUs such as 0,2-3 (default: every online CPU)\n"
"  -p, --pid PID                 only process PID (ends when it exits)\n"
"      --cgroup PATH             only tasks in this cgroup v2 directory (absolute,\n"
"                                or relative to the cgroup2 mount) and below\n"
"  [--] COMMAND [ARGS...]        run COMMAND, watch only it and its children,\n"
"                                exit with its status\n"
"Delivery:\n"
"      --loop uv|event|ev|epoll  event loop (default: uv when built, else epoll)\n"
"      --watermark BYTES         wake the loop when a ring holds BYTES (suffix k or\n"
"                                m allowed; default 4096; 0 = no wakeups, poll\n"
"                                every --flush-ms, default 15)\n"
"      --wakeup-events N         wake the loop every N samples instead\n"
"      --flush-ms MS             drain every ring at least this often (default 100)\n"
"      --budget N                at most N records per callback (default: no limit)\n"
"      --pages N                 ring data pages per CPU, a power of two (default 64)\n"
"What the events say:\n"
"      --by SYSTEM:NAME:FIELD    a top table of that tracepoint field's values\n"
"                                (string or integer) with count, rate and share;\n"
"                                repeatable; adds the event if -e did not name it;\n"
"                                a pointer field (const char *) counts addresses,\n"
"                                not strings\n"
"      --top N                   rows per --by table (default: what fits the\n"
"                                terminal; 10 when not a terminal)\n"
"      --max-series N            distinct values kept per --by (default 1000);\n"
"                                the rest are counted as \"other\"\n"
"      --print                   one line per sample as perf script prints it:\n"
"                                comm pid/tid [cpu] time: event: field=value...\n"
"      --order-window MS         with --print: lines in time order across CPUs,\n"
"                                each at most MS + --flush-ms after its time\n"
"                                (default 10; 0 = off: as each ring delivers)\n"
"Output:\n"
"  -d, --duration SECONDS        stop after SECONDS (default: until Ctrl-C)\n"
"      --json                    one JSON object per line: start, one per second,\n"
"                                and a final summary\n"
"      --dump                    with --json and --bpf-map, also one line per BPF\n"
"                                sample: its first 32 payload bytes in hex\n"
"      --dump-bytes N            with --dump: the first N bytes instead, 0 to\n"
"                                65535 (65535 shows any payload whole)\n"
"      --listen ADDR:PORT        also serve Prometheus metrics at /metrics (as\n"
"                                perfring-exporter; runs on the libevent loop);\n"
"                                an IPv6 address in brackets: [::1]:9464\n"
"Flight recorder:\n"
"      --overwrite               record silently into overwrite rings (the newest\n"
"                                records always kept, no wakeups); print a snapshot\n"
"                                on the signal and at the end: a perf script-like\n"
"                                line per sample, or with --json one object each\n"
"      --snapshot-on SIGNAL      SIGUSR2 or SIGUSR1 takes a snapshot\n"
"      --snapshot-dir DIR        write each snapshot to DIR/snapshot-N.txt (.json)\n"
"      --snapshot-wait grace|visit  how a snapshot waits out the kernel's writers:\n"
"                                an RCU grace period (default), or a visit to each\n"
"                                CPU (a shorter pause; held by a real-time hog)\n"
"  -h, --help                    this text\n"
"  -V, --version                 the libperfring version\n"
"\n"
"Examples:\n"
"  perfring-watch -e sched:sched_switch --by sched:sched_switch:next_comm\n"
"  perfring-watch --by sched:sched_process_exec:filename -- make -j2\n"
"  perfring-watch -e signal:signal_generate --filter 'sig == 9' --print\n"
"  perfring-watch --by raw_syscalls:sys_enter:id --top 5 -d 10 --json\n"
"  perfring-watch --profile 999 -d 10 -- ./my-program\n"
"  perfring-watch -u /usr/lib/x86_64-linux-gnu/libc.so.6:malloc -p 1234\n"
"\n"
"Exit status: 0 on success, 1 when perf or the loop fails, 2 for bad arguments;\n"
"with COMMAND, its exit status (128+N if signal N ended it).\n"
"See perfring-watch(1).\n"
"\n"
"Loops in this build: ";

static const char exporter_usage_text[] =
"usage: perfring-exporter [-e SYSTEM:NAME [--filter EXPR]]... [-s SOFTWARE[:PERIOD]]...\n"
"                         [-c CPUS] [-p PID | [--] COMMAND [ARGS...]]\n"
"                         [--watermark BYTES | --wakeup-events N] [--flush-ms MS]\n"
"                         [--budget N] [--pages N] [-d SECONDS]\n"
"                         [--by SYSTEM:NAME:FIELD]... [--max-series N]\n"
"                         [--listen ADDR:PORT] [--bpf-map PIN_PATH]...\n"
"\n"
"Serves GET /metrics in the Prometheus text format (0.0.4) from one libevent\n"
"loop: per-CPU ring counters, samples per event, ring fill, a delivery-latency\n"
"histogram and, with --by, samples per value of a tracepoint field.\n"
"The event and delivery options are perfring-watch's (see perfring-watch(1)).\n"
"\n"
"      --listen ADDR:PORT        where to serve (default 127.0.0.1:9464); an IPv6\n"
"                                address in brackets: [::1]:9464\n"
"      --by SYSTEM:NAME:FIELD    perfring_samples_by_field_total{value=...}\n"
"      --max-series N            distinct values per --by (default 1000); the rest\n"
"                                go to value=\"other\"\n"
"  -d, --duration SECONDS        stop after SECONDS (default: SIGTERM or SIGINT)\n"
"  -h, --help                    this text\n"
"  -V, --version                 the libperfring version\n"
"\n"
"Example:\n"
"  perfring-exporter -e sched:sched_switch --by sched:sched_switch:next_comm\n"
"\n"
"Exit status: 0 on success (also after SIGTERM), 1 on failure, 2 for bad\n"
"arguments. See perfring-exporter(1).\n";

/* The loops this build can run, in order of preference for the default. */
static const char built_loops[] =
#ifdef HAVE_PERFRING_UV
	"uv "
#endif
#ifdef HAVE_PERFRING_EVENT
	"event "
#endif
#ifdef HAVE_PERFRING_EV
	"ev "
#endif
	"epoll";

static const struct {
	const char *name;
	enum perfring_software kind;
} sw_names[] = {
	{ "cpu-clock", PERFRING_SW_CPU_CLOCK },
	{ "task-clock", PERFRING_SW_TASK_CLOCK },
	{ "context-switches", PERFRING_SW_CONTEXT_SWITCHES },
	{ "cs", PERFRING_SW_CONTEXT_SWITCHES },
	{ "page-faults", PERFRING_SW_PAGE_FAULTS },
	{ "faults", PERFRING_SW_PAGE_FAULTS },
	{ "minor-faults", PERFRING_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERFRING_SW_PAGE_FAULTS_MAJ },
	{ "cpu-migrations", PERFRING_SW_CPU_MIGRATIONS },
	{ "migrations", PERFRING_SW_CPU_MIGRATIONS },
};

static const char *const loop_names[] = {
	[WATCH_LOOP_EPOLL] = "epoll", [WATCH_LOOP_UV] = "uv",
	[WATCH_LOOP_EVENT] = "event", [WATCH_LOOP_EV] = "ev",
};

enum { OPT_LOOP = 256, OPT_WATERMARK, OPT_WAKEUP_EVENTS, OPT_FLUSH_MS, OPT_BUDGET, OPT_PAGES,
       OPT_JSON, OPT_BY, OPT_TOP, OPT_MAX_SERIES, OPT_PRINT, OPT_FILTER, OPT_LISTEN,
       OPT_BPF_MAP, OPT_DUMP, OPT_OVERWRITE, OPT_SNAPSHOT_ON, OPT_SNAPSHOT_DIR, OPT_CGROUP,
       OPT_PROFILE, OPT_SNAPSHOT_WAIT, OPT_DUMP_BYTES, OPT_ORDER_WINDOW };

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "software", required_argument, NULL, 's' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "watermark", required_argument, NULL, OPT_WATERMARK },
	{ "wakeup-events", required_argument, NULL, OPT_WAKEUP_EVENTS },
	{ "flush-ms", required_argument, NULL, OPT_FLUSH_MS },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "by", required_argument, NULL, OPT_BY },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "max-series", required_argument, NULL, OPT_MAX_SERIES },
	{ "print", no_argument, NULL, OPT_PRINT },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "bpf-map", required_argument, NULL, OPT_BPF_MAP },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "dump-bytes", required_argument, NULL, OPT_DUMP_BYTES },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "snapshot-on", required_argument, NULL, OPT_SNAPSHOT_ON },
	{ "snapshot-dir", required_argument, NULL, OPT_SNAPSHOT_DIR },
	{ "snapshot-wait", required_argument, NULL, OPT_SNAPSHOT_WAIT },
	{ "uprobe", required_argument, NULL, 'u' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "order-window", required_argument, NULL, OPT_ORDER_WINDOW },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static enum watch_prog cur_prog;

const char *watch_prog_name(const struct watch_args *a)
{
	return a->prog == WATCH_PROG_EXPORTER ? "perfring-exporter" : "perfring-watch";
}

__attribute__((format(printf, 1, 2)))
static int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cur_prog == WATCH_PROG_EXPORTER ? "perfring-exporter" :
		"perfring-watch");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	return WATCH_EXIT_USAGE;
}

const char *watch_sw_name(enum perfring_software kind)
{
	for (size_t i = 0; i < sizeof(sw_names) / sizeof(sw_names[0]); i++)
		if (sw_names[i].kind == kind)
			return sw_names[i].name;
	return "software";
}

static uint64_t suffix_mult(char c)
{
	return c == 'k' || c == 'K' ? 1024 : c == 'm' || c == 'M' ? 1024 * 1024 : 1;
}

/* A whole unsigned number with an optional k/m (x1024) suffix when allowed.
 * Only digits: strtoull alone would take " -1" as 2^64 - 1. A value past max
 * before or after the suffix is refused, never wrapped. */
static int parse_num(const char *opt, const char *str, bool suffix, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	errno = 0;
	v = strtoull(str, &end, 10);
	if (end != str && suffix && (mult = suffix_mult(*end)) > 1)
		end++;
	if (errno || end == str || *end || *str < '0' || *str > '9' || v > max / mult)
		return bad("%s: '%s' is not a number from 0 to %llu%s", opt, str,
			   (unsigned long long)max, suffix ? " bytes" : "");
	*out = v * mult;
	return 0;
}

static int parse_u32(const char *opt, const char *str, bool suffix, uint32_t *out)
{
	uint64_t v;
	int err = parse_num(opt, str, suffix, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

static int add_cpu_range(struct watch_args *a, unsigned long lo, unsigned long hi)
{
	int *c = realloc(a->cpus, (a->cpu_cnt + (hi - lo + 1)) * sizeof(*c));

	if (!c)
		return bad("out of memory");
	a->cpus = c;
	for (unsigned long i = lo; i <= hi; i++)
		a->cpus[a->cpu_cnt++] = (int)i;
	return 0;
}

/* "0,2-3": ranges separated by commas. Whether each CPU is online is the
 * session's check (-ENODEV with the online list). */
static int parse_cpus(struct watch_args *a, const char *str)
{
	const char *p = str;

	a->cpu_cnt = 0;
	do {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p || *p == '-' || *p == '+')
			return bad("-c %s: expected CPU numbers such as 0,2-3", str);
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p || *p == '-' || *p == '+' || hi < lo)
				return bad("-c %s: bad range (expected such as 2-3)", str);
		}
		if (hi > MAX_CPU_NUM)
			return bad("-c %s: CPU %lu does not exist", str, hi);
		if (*end && *end != ',')
			return bad("-c %s: unexpected '%c'", str, *end);
		if (add_cpu_range(a, lo, hi))
			return WATCH_EXIT_USAGE;
		p = end + 1;
	} while (p[-1] == ',');
	return 0;
}

static int parse_event(struct watch_args *a, const char *str)
{
	const char *colon = strchr(str, ':');

	if (!colon || colon == str || !colon[1] || strchr(colon + 1, ':'))
		return bad("-e %s: expected SYSTEM:NAME, such as sched:sched_switch", str);
	if (a->tp_cnt == WATCH_MAX_EVENTS)
		return bad("at most %d -e options", WATCH_MAX_EVENTS);
	a->tp[a->tp_cnt++] = str;
	return 0;
}

static int parse_software(struct watch_args *a, const char *str)
{
	size_t len = strcspn(str, ":");
	struct watch_sw sw = { .period = 0 };
	size_t i, n = sizeof(sw_names) / sizeof(sw_names[0]);

	for (i = 0; i < n; i++)
		if (strlen(sw_names[i].name) == len && !strncmp(sw_names[i].name, str, len))
			break;
	if (i == n)
		return bad("-s %s: unknown software event (cpu-clock, task-clock, "
			   "context-switches, page-faults, minor-faults, major-faults, "
			   "cpu-migrations)", str);
	sw.kind = sw_names[i].kind;
	/* The kernel refuses a sample_period with bit 63 set. */
	if (str[len] && parse_num("-s PERIOD", str + len + 1, false, INT64_MAX, &sw.period))
		return WATCH_EXIT_USAGE;
	if (!sw.period)
		sw.period = sw.kind <= PERFRING_SW_TASK_CLOCK ? 1000000 : 1;
	if (a->sw_cnt == WATCH_MAX_EVENTS)
		return bad("at most %d -s options", WATCH_MAX_EVENTS);
	a->sw[a->sw_cnt++] = sw;
	return 0;
}

static int parse_loop(struct watch_args *a, const char *str)
{
	for (int i = WATCH_LOOP_EPOLL; i <= WATCH_LOOP_EV; i++) {
		if (!strcmp(str, loop_names[i])) {
			a->loop = (enum watch_loop_kind)i;
			return 0;
		}
	}
	return bad("--loop %s: expected uv, event, ev or epoll", str);
}

static int parse_duration(struct watch_args *a, const char *str)
{
	char *end;
	double d = strtod(str, &end);

	if (end == str || *end || !(d > 0) || d > 1e9)
		return bad("-d %s: expected a positive number of seconds", str);
	a->duration_s = d;
	return 0;
}

static int parse_pid(struct watch_args *a, const char *str)
{
	uint64_t v;

	if (parse_num("-p", str, false, INT_MAX, &v))
		return WATCH_EXIT_USAGE;
	if (!v)
		return bad("-p 0: expected a process id");
	a->pid = (int)v;
	return 0;
}

/* PATH:SYMBOL or PATH:SYMBOL%return; the path may itself hold a ':'. */
static int parse_uprobe(struct watch_args *a, const char *str)
{
	const char *colon = strrchr(str, ':');

	if (!colon || colon == str || !colon[1] || !strcmp(colon + 1, "%return"))
		return bad("-u %s: expected PATH:SYMBOL or PATH:SYMBOL%%return", str);
	if (a->uprobe_cnt == WATCH_MAX_EVENTS)
		return bad("at most %d -u options", WATCH_MAX_EVENTS);
	a->uprobe[a->uprobe_cnt++] = str;
	return 0;
}

static int parse_by(struct watch_args *a, const char *str)
{
	struct fieldcount fc;

	if (fc_parse(&fc, str))
		return bad("--by %s: expected SYSTEM:NAME:FIELD, such as "
			   "sched:sched_switch:next_comm", str);
	if (a->by_cnt == WATCH_MAX_BY)
		return bad("at most %d --by options", WATCH_MAX_BY);
	for (size_t i = 0; i < a->by_cnt; i++)
		if (!strcmp(a->by[i], str))
			return bad("--by %s: given twice", str);
	a->by[a->by_cnt++] = str;
	return 0;
}

static int parse_filter(struct watch_args *a, const char *str)
{
	if (!a->tp_cnt)
		return bad("--filter %s: must follow the -e tracepoint it filters", str);
	if (a->filter[a->tp_cnt - 1])
		return bad("--filter %s: -e %s has a filter already", str, a->tp[a->tp_cnt - 1]);
	a->filter[a->tp_cnt - 1] = str;
	return 0;
}

static int parse_snapshot_wait(struct watch_args *a, const char *arg)
{
	if (!strcmp(arg, "grace"))
		a->snapshot_wait = PERFRING_SNAPSHOT_WAIT_GRACE;
	else if (!strcmp(arg, "visit"))
		a->snapshot_wait = PERFRING_SNAPSHOT_WAIT_VISIT;
	else
		return bad("--snapshot-wait: expected grace or visit");
	a->snapshot_wait_set = true;
	return 0;
}

static int parse_snapshot_sig(struct watch_args *a, const char *str)
{
	const char *n = strncmp(str, "SIG", 3) ? str : str + 3;

	if (!strcmp(n, "USR2"))
		a->snapshot_sig = SIGUSR2;
	else if (!strcmp(n, "USR1"))
		a->snapshot_sig = SIGUSR1;
	else
		return bad("--snapshot-on %s: SIGUSR1 or SIGUSR2", str);
	return 0;
}

/* The recorder reads no ring until a snapshot, and a BPF ring buffer has
 * no overwrite mode to keep its newest records meanwhile: once full, the
 * program's writes fail. A pin that cannot be opened is left to the
 * session, whose sentence names the cause. */
static int overwrite_bpf_maps(const struct watch_args *a)
{
	char why[320];
	size_t i;
	int fd, type;

	for (i = 0; i < a->bpf_cnt; i++) {
		if ((fd = watch_bpf_get(a->bpf_map[i], why, sizeof(why))) < 0)
			continue;
		type = watch_bpf_map_type(fd);
		close(fd);
		if (type == BPF_MAP_TYPE_RINGBUF)
			return bad("--overwrite: --bpf-map %s is a BPF_MAP_TYPE_RINGBUF (type %d), "
				   "and a BPF ring buffer has no overwrite mode: once full, its "
				   "program's writes fail instead of replacing the oldest records, "
				   "so no snapshot could hold its newest; watch it without "
				   "--overwrite", a->bpf_map[i], type);
	}
	return 0;
}

/* --overwrite owns the output and the waiting: the options of either go. */
static int check_overwrite(struct watch_args *a)
{
	if (!a->overwrite) {
		if (a->snapshot_sig || a->snapshot_dir || a->snapshot_wait_set)
			return bad("--snapshot-on, --snapshot-dir and --snapshot-wait need --overwrite");
		return 0;
	}
	if (a->prog == WATCH_PROG_EXPORTER || a->watermark_set || a->wakeup_events ||
	    a->flush_ms || a->budget || a->by_cnt || a->listen || a->print || a->top ||
	    a->loop != WATCH_LOOP_DEFAULT)
		return bad("--overwrite records silently and prints snapshots: it takes none of "
			   "--watermark, --wakeup-events, --flush-ms, --budget, --by, --top, "
			   "--print, --listen, --loop");
	a->watermark = 0;
	a->print = true; /* the fields and comms of --print, in either form */
	return overwrite_bpf_maps(a);
}

/* [ADDR] of [ADDR]:PORT: a numeric IPv6 address (a zone such as %lo too). */
static bool ipv6_literal(const char *p, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_INET6, .ai_flags = AI_NUMERICHOST }, *ai;
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];

	if (!len || len >= sizeof(host))
		return false;
	memcpy(host, p, len);
	host[len] = '\0';
	if (getaddrinfo(host, NULL, &hints, &ai))
		return false;
	freeaddrinfo(ai);
	return true;
}

/* ADDR:PORT or [IPV6]:PORT. A name or an IPv4 address is checked when it is
 * bound; an IPv6 one needs its brackets, as in a URL, or its last group
 * would be taken for the port. */
static int parse_listen(struct watch_args *a, const char *str)
{
	const char *colon = strrchr(str, ':'), *close = strchr(str, ']');
	uint64_t port;

	if (str[0] == '[') {
		if (!close || close[1] != ':' || !close[2])
			return bad("--listen %s: expected [IPV6]:PORT, such as [::1]:9464", str);
		if (!ipv6_literal(str + 1, (size_t)(close - str - 1)))
			return bad("--listen %s: '%.*s' is not an IPv6 address", str,
				   (int)(close - str - 1), str + 1);
		colon = close + 1;
	} else if (close || (colon && memchr(str, ':', (size_t)(colon - str)))) {
		return bad("--listen %s: an IPv6 address goes in brackets, such as [::1]:9464",
			   str);
	}
	if (!colon || colon == str)
		return bad("--listen %s: expected ADDR:PORT, such as 127.0.0.1:9464", str);
	if (parse_num("--listen PORT", colon + 1, false, 65535, &port))
		return WATCH_EXIT_USAGE;
	if (!port)
		return bad("--listen %s: port 0", str);
	a->listen = str;
	return 0;
}

static int parse_count(const char *opt, const char *str, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_num(opt, str, false, max, &v))
		return WATCH_EXIT_USAGE;
	if (!v)
		return bad("%s 0: expected at least 1", opt);
	*out = (uint32_t)v;
	return 0;
}

static int parse_bpf_map(struct watch_args *a, const char *path)
{
	if (!*path)
		return bad("--bpf-map: an empty path");
	if (a->bpf_cnt == WATCH_MAX_EVENTS)
		return bad("at most %d --bpf-map", WATCH_MAX_EVENTS);
	a->bpf_map[a->bpf_cnt++] = path;
	return 0;
}

static int parse_dump_bytes(struct watch_args *a, const char *str)
{
	uint64_t v;

	if (parse_num("--dump-bytes", str, false, WATCH_DUMP_BYTES_MAX, &v))
		return WATCH_EXIT_USAGE;
	a->dump_bytes = (uint32_t)v;
	return 0;
}

/* Whole milliseconds, at most WATCH_ORDER_WINDOW_MAX_MS: a longer window
 * would hold every line back for minutes, which no one asking for order
 * means. */
static int parse_order_window(struct watch_args *a, const char *str)
{
	uint64_t v;

	if (parse_num("--order-window", str, false, WATCH_ORDER_WINDOW_MAX_MS, &v))
		return WATCH_EXIT_USAGE;
	a->order_window_ns = v * 1000000ull;
	a->order_window_set = true;
	return 0;
}

static int print_version(void)
{
	printf("%s (libperfring %d.%d.%d)\nloops: %s\n", cur_prog == WATCH_PROG_EXPORTER ?
	       "perfring-exporter" : "perfring-watch", perfring_version() / 10000,
	       perfring_version() / 100 % 100, perfring_version() % 100, built_loops);
	return 1;
}

static int parse_one(struct watch_args *a, int opt, const char *arg)
{
	switch (opt) {
	case 'e': return parse_event(a, arg);
	case 's': return parse_software(a, arg);
	case 'c': return parse_cpus(a, arg);
	case 'p': return parse_pid(a, arg);
	case 'd': return parse_duration(a, arg);
	case OPT_LOOP: return parse_loop(a, arg);
	case OPT_WATERMARK:
		a->watermark_set = true;
		return parse_u32("--watermark", arg, true, &a->watermark);
	case OPT_WAKEUP_EVENTS: return parse_u32("--wakeup-events", arg, false, &a->wakeup_events);
	case OPT_FLUSH_MS: return parse_u32("--flush-ms", arg, false, &a->flush_ms);
	case OPT_BUDGET: return parse_u32("--budget", arg, false, &a->budget);
	case OPT_PAGES: return parse_u32("--pages", arg, false, &a->pages);
	case OPT_JSON: a->json = true; return 0;
	case OPT_BY: return parse_by(a, arg);
	case OPT_TOP: return parse_count("--top", arg, 100000, &a->top);
	case OPT_MAX_SERIES: return parse_count("--max-series", arg, 1000000, &a->max_series);
	case OPT_PRINT: a->print = true; return 0;
	case OPT_FILTER: return parse_filter(a, arg);
	case OPT_LISTEN: return parse_listen(a, arg);
	case OPT_BPF_MAP: return parse_bpf_map(a, arg);
	case OPT_DUMP: a->dump = true; return 0;
	case OPT_DUMP_BYTES:
		a->dump_bytes_set = true;
		return parse_dump_bytes(a, arg);
	case OPT_OVERWRITE: a->overwrite = true; return 0;
	case OPT_SNAPSHOT_ON: return parse_snapshot_sig(a, arg);
	case OPT_SNAPSHOT_DIR: a->snapshot_dir = arg; return 0;
	case OPT_SNAPSHOT_WAIT: return parse_snapshot_wait(a, arg);
	case 'u': return parse_uprobe(a, arg);
	case OPT_CGROUP:
		if (!*arg)
			return bad("--cgroup: expected a cgroup directory");
		a->cgroup = arg;
		return 0;
	case OPT_PROFILE: return parse_count("--profile", arg, 100000, &a->profile_hz);
	case OPT_ORDER_WINDOW: return parse_order_window(a, arg);
	case 'h':
		if (a->prog == WATCH_PROG_EXPORTER)
			fputs(exporter_usage_text, stdout);
		else
			printf("%s%s\n", usage_text, built_loops);
		return 1;
	case 'V': return print_version();
	default: return bad("unknown option");
	}
}

/* A --by's event joins the -e list unless it is there already. */
static int add_by_events(struct watch_args *a)
{
	for (size_t i = 0; i < a->by_cnt; i++) {
		struct fieldcount fc;
		size_t j = 0;

		fc_parse(&fc, a->by[i]);
		while (j < a->tp_cnt && strcmp(a->tp[j], fc.event))
			j++;
		if (j < a->tp_cnt)
			continue;
		if (a->tp_cnt == WATCH_MAX_EVENTS)
			return bad("at most %d events with -e and --by", WATCH_MAX_EVENTS);
		memcpy(a->by_event[i], fc.event, sizeof(fc.event));
		a->tp[a->tp_cnt++] = a->by_event[i];
	}
	return 0;
}

/* What one program accepts and the other does not, and what --listen needs. */
static int check_prog(struct watch_args *a)
{
	if (a->prog == WATCH_PROG_EXPORTER) {
		if (a->json || a->print || a->top || a->loop != WATCH_LOOP_DEFAULT)
			return bad("--json, --print, --top and --loop are perfring-watch's, not "
				   "the exporter's");
		if (!a->listen)
			a->listen = "127.0.0.1:9464";
	}
	if (a->json && a->print)
		return bad("--json and --print exclude each other");
	if (a->dump && (!a->json || !a->bpf_cnt))
		return bad("--dump needs --json and a --bpf-map (it adds lines to the JSON)");
	if (a->dump_bytes_set && !a->dump)
		return bad("--dump-bytes needs --dump (it sets how many bytes each line shows)");
	if (!a->dump_bytes_set)
		a->dump_bytes = WATCH_DUMP_BYTES;
	if (a->print && a->by_cnt)
		return bad("--print and --by exclude each other (one owns the output)");
	if (a->order_window_set && (!a->print || a->overwrite))
		return bad("--order-window needs --print (it orders the printed lines)");
	if (a->print && !a->order_window_set)
		a->order_window_ns = WATCH_ORDER_WINDOW_MS * 1000000ull;
	if (a->listen && a->loop != WATCH_LOOP_DEFAULT && a->loop != WATCH_LOOP_EVENT)
		return bad("--listen serves from the libevent loop; drop --loop or use --loop event");
	if (a->listen)
		a->loop = WATCH_LOOP_EVENT;
	return 0;
}

/* Defaults that depend on the rest of the line, and exclusive options. */
static int finish_args(struct watch_args *a, int argc, char **argv)
{
	int err;

	if (optind < argc)
		a->command = argv + optind;
	if (a->command && a->pid)
		return bad("-p and a COMMAND exclude each other");
	if (a->cgroup && (a->command || a->pid))
		return bad("--cgroup excludes -p and a COMMAND");
	if (a->profile_hz && a->print)
		return bad("--profile and --print exclude each other (one owns the output)");
	if (!a->watermark_set && !a->wakeup_events)
		a->watermark = 4096;
	if ((err = add_by_events(a)) || (err = check_prog(a)) || (err = check_overwrite(a)))
		return err;
	if (!a->max_series)
		a->max_series = FC_DEFAULT_MAX_SERIES;
	if (!a->tp_cnt && !a->sw_cnt && !a->bpf_cnt && !a->uprobe_cnt && !a->profile_hz)
		a->tp[a->tp_cnt++] = "sched:sched_switch";
	return 0;
}

int watch_args_parse(struct watch_args *a, int argc, char **argv)
{
	return watch_args_parse_as(a, WATCH_PROG_WATCH, argc, argv);
}

int watch_args_parse_as(struct watch_args *a, enum watch_prog prog, int argc, char **argv)
{
	int opt, err;

	*a = (struct watch_args){ .loop = WATCH_LOOP_DEFAULT, .prog = prog };
	cur_prog = prog;
	opterr = 0;
	/* '+': the first non-option starts COMMAND, so its own options stay its. */
	while ((opt = getopt_long(argc, argv, "+e:s:c:p:d:u:hV", long_opts, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			if (optopt && optopt < 256)
				return bad("-%c: unknown option or missing argument", optopt);
			return bad("%s: unknown option or missing argument", argv[optind - 1]);
		}
		if ((err = parse_one(a, opt, optarg)))
			return err;
	}
	return finish_args(a, argc, argv);
}

void watch_args_free(struct watch_args *a)
{
	free(a->cpus);
	a->cpus = NULL;
}
