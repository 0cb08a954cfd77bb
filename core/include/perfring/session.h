/* SPDX-License-Identifier: MIT */
/*
 * A session: its options, the events it reads (tracepoints, software events,
 * a caller's attrs, uprobes, groups), its callbacks, start and stop.
 */
#ifndef PERFRING_SESSION_H
#define PERFRING_SESSION_H

#include <perfring/common.h>
#include <perfring/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Session options. See the field comments for defaults. */
struct perfring_opts {
	size_t sz;                 /**< sizeof(struct perfring_opts) */
	const int *cpus;           /**< CPUs to watch; NULL = every online CPU (sysfs) */
	size_t cpu_cnt;            /**< entries in cpus */
	int pid;                   /**< 0 = every task on those CPUs; >0 = that process
	                                (all its threads, and children via inherit);
	                                negative is -EINVAL. R2: the session follows
	                                the process, not its first thread: a ring
	                                whose fd reports HUP (that task's exit) is
	                                still read, on the flush timer, until the
	                                whole process exits (a pidfd tells); only
	                                then is its end reported */
	uint32_t ring_pages;       /**< data pages per CPU, a power of two; 0 = 64.
	                                The mapping is 1 + ring_pages pages. At most
	                                the kernel's largest ring (2^18 pages with
	                                4 KiB pages; see perfring_session_new). */
	uint32_t wakeup_watermark; /**< bytes; 0 = off. Must be < the ring data size.
	                                Sets attr.watermark=1 on each CPU's leader. */
	uint32_t wakeup_events;    /**< samples; 0 = off. Not with wakeup_watermark. */
	uint32_t poll_interval_ms; /**< default mode: sleep between empty passes; 0 = 15 */
	uint32_t flush_ms;         /**< wakeup mode: longest a record below the watermark
	                                waits; 0 = 100; PERFRING_FLUSH_NEVER = never */
	uint32_t enable_on_exec;   /**< non-zero (needs pid > 0): every event counts from
	                                the process's next execve (attr.enable_on_exec),
	                                as `perf stat -- COMMAND` does, not from start */
	const char *cgroup;        /**< NULL = off; else a cgroup v2 directory, absolute
	                                (/sys/fs/cgroup/my.slice) or relative to the
	                                cgroup2 mount (my.slice): every event, and the
	                                CPU's tracking records, is opened per CPU with
	                                PERF_FLAG_PID_CGROUP on that directory, so only
	                                tasks in it and its descendants are seen.
	                                Not with pid (-EINVAL). Opened (and checked)
	                                by perfring_session_new: -ENOENT for a missing
	                                directory, -EINVAL for one outside cgroup v2
	                                (its filesystem is checked with fstatfs: a
	                                directory holding a file named
	                                cgroup.controllers is not enough),
	                                -EACCES; the sentence names the path. The
	                                session holds it open until freed */
	uint32_t overwrite;        /**< non-zero: a flight recorder. Every ring is
	                                written backward (attr.write_backward on each
	                                leader and every event redirected into it) and
	                                mapped read-only, so the kernel overwrites the
	                                oldest records and never stops for a reader.
	                                Only perfring_session_snapshot() reads them:
	                                ordinary parses, the pull form and attaching
	                                a reactor or adapter are -EOPNOTSUPP. No
	                                wakeups and no timer: wakeup_watermark,
	                                wakeup_events, flush_ms and poll_interval_ms
	                                must be 0 (-EINVAL). What it still costs the
	                                kernel: docs/API-NOTES.md */
	uint32_t follow_hotplug;   /**< non-zero (needs cpus NULL; not with
	                                overwrite): follow CPUs going offline and
	                                coming online. See "CPU hotplug" in
	                                <perfring/parse.h> */
	uint64_t order_window_ns;  /**< 0 = off. Merged parses hold back records
	                                younger than this window so that they
	                                deliver in time order across rings (see
	                                "Time order with a bound" in
	                                <perfring/parse.h>) */
};

/** Software events for perfring_session_add_software(). */
enum perfring_software {
	PERFRING_SW_CPU_CLOCK = 0,     /**< CPU clock: profiling by time */
	PERFRING_SW_TASK_CLOCK,        /**< task clock */
	PERFRING_SW_CONTEXT_SWITCHES,  /**< context switches */
	PERFRING_SW_PAGE_FAULTS,       /**< page faults (all) */
	PERFRING_SW_PAGE_FAULTS_MIN,   /**< minor page faults */
	PERFRING_SW_PAGE_FAULTS_MAJ,   /**< major page faults */
	PERFRING_SW_CPU_MIGRATIONS,    /**< CPU migrations */
};

/** Extra settings for perfring_session_add_software_opts(). */
struct perfring_software_opts {
	size_t sz;              /**< sizeof(struct perfring_software_opts) */
	uint64_t period;        /**< sample every N events (or ns for clocks); 0 = 1 */
	uint64_t freq;          /**< if non-zero: sample at this rate in Hz instead */
	uint32_t callchain;     /**< non-zero: add PERF_SAMPLE_CALLCHAIN */
	uint32_t exclude_kernel;/**< non-zero: user space only (unprivileged use) */
	uint64_t regs_user;     /**< PERF_SAMPLE_REGS_USER mask (bits of
	                             asm/perf_regs.h); 0 = none, or with stack_user
	                             PERFRING_REGS_USER_DEFAULT */
	uint32_t stack_user;    /**< bytes of user stack from SP per sample
	                             (PERF_SAMPLE_STACK_USER), a multiple of 8, at
	                             most PERFRING_STACK_USER_MAX; 0 = none. The
	                             kernel may copy less (dyn_size) */
};

/** What a DWARF unwinder needs at least: the frame pointer, stack pointer
 *  and instruction pointer. x86-64: bp (6), sp (7), ip (8). */
#define PERFRING_REGS_X86_64_DEFAULT ((1ull << 6) | (1ull << 7) | (1ull << 8))
/** aarch64: x29 (fp, 29), lr (30), sp (31), pc (32). */
#define PERFRING_REGS_AARCH64_DEFAULT ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))
/** The default mask for the architecture built for (0 where there is none). */
#if defined(__x86_64__)
#define PERFRING_REGS_USER_DEFAULT PERFRING_REGS_X86_64_DEFAULT
#elif defined(__aarch64__)
#define PERFRING_REGS_USER_DEFAULT PERFRING_REGS_AARCH64_DEFAULT
#else
#define PERFRING_REGS_USER_DEFAULT 0ull
#endif
/** The largest stack_user: a record's size is a u16. */
#define PERFRING_STACK_USER_MAX 65528u

/* --------------------------------------------------------------- session */

/** Validates opts (NULL = all defaults) and makes a session. Nothing is opened
 *  yet. -EINVAL for a bad field (the sentence names it), -ENODEV for an
 *  offline CPU, -E2BIG for a non-zero unknown opts tail, -ENOMEM.
 *  R10: ring_pages above the largest ring the kernel maps is -EINVAL, and the
 *  sentence names the largest value (how the kernel sets it:
 *  docs/API-NOTES.md). */
PERFRING_API int perfring_session_new(const struct perfring_opts *opts,
				      struct perfring_session **out);

/** Disables every event (R5: first, so a forked child holding copies of the
 *  fds leaves nothing counting), unmaps, closes and frees the session. Safe
 *  in any state and with NULL. R6: reactors and adapters attached to it are
 *  cancelled: later calls on them call no callback and touch no session
 *  memory; detaching them still frees them. R7: called from one of the
 *  session's own callbacks, it stops delivery after that record, and the
 *  session is freed when the outermost parse call returns, which then
 *  returns -ECANCELED; the pointer is invalid from the call on. */
PERFRING_API void perfring_session_free(struct perfring_session *s);

/** Adds tracepoint system:name (before start). Reads its id and format from
 *  tracefs (PERFRING_TRACEFS overrides the search of /sys/kernel/tracing,
 *  /sys/kernel/debug/tracing and /proc/mounts). The sample carries IDENTIFIER,
 *  TID, TIME, CPU and RAW. -EINVAL when system or name is empty, holds a '/'
 *  or starts with '.' (each is one directory of tracefs's events/), -ENOENT
 *  for an unknown tracepoint, -ENODEV when no tracefs is mounted, -EBUSY
 *  after start. *out (may be NULL) is owned by s. */
PERFRING_API int perfring_session_add_tracepoint(struct perfring_session *s,
						 const char *system, const char *name,
						 struct perfring_event **out);

/** Adds a software event sampling every `period` events (0 = 1).
 *  One event of a kind per session (R12): a second one of the same kind, or
 *  one of the type and config of an add_attr event, is -EEXIST with a
 *  sentence (why: R12 in docs/RULES.md). Records of ids the session does
 *  not own (another session's event of the same kind can put them in its
 *  rings) are counted in stats.unknown and never delivered as samples. */
PERFRING_API int perfring_session_add_software(struct perfring_session *s,
					       enum perfring_software kind, uint64_t period,
					       struct perfring_event **out);

/** Adds a software event with frequency, callchain or user-only settings.
 *  -EEXIST for a kind the session already has (R12, see add_software). */
PERFRING_API int perfring_session_add_software_opts(struct perfring_session *s,
						    enum perfring_software kind,
						    const struct perfring_software_opts *opts,
						    struct perfring_event **out);

/** Adds a caller's attr (copied). The library still forces IDENTIFIER, TID,
 *  TIME and CPU in sample_type, sample_id_all, use_clockid=CLOCK_MONOTONIC and
 *  disabled, and clears the wakeup settings (the session owns those); the
 *  fds are opened with the library's read_format (ID and LOST, for R4). A
 *  sample_type bit the decoder does not support is -EOPNOTSUPP; the sentence
 *  names it. Supported: IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD
 *  CALLCHAIN RAW, and the profiler's READ (read_format TOTAL_TIME_ENABLED,
 *  TOTAL_TIME_RUNNING, GROUP; ID and LOST are always added, so READ needs
 *  Linux 6.0+; other read_format bits are -EINVAL), BRANCH_STACK (with
 *  branch_sample_type HW_INDEX or not), REGS_USER, REGS_INTR, STACK_USER,
 *  WEIGHT, WEIGHT_STRUCT, DATA_SRC, TRANSACTION, PHYS_ADDR, CGROUP,
 *  DATA_PAGE_SIZE and CODE_PAGE_SIZE; AUX is -EOPNOTSUPP. A
 *  PERF_TYPE_SOFTWARE attr whose config the session already has (from
 *  add_attr or add_software) is -EEXIST (R12), whatever its sample_type;
 *  PERF_COUNT_SW_BPF_OUTPUT is not shared that way (each output goes to its
 *  one event), so it is exempt. */
PERFRING_API int perfring_session_add_attr(struct perfring_session *s,
					   const struct perf_event_attr *attr,
					   struct perfring_event **out);

/** Puts member into leader's group (before start; else -EBUSY). At start,
 *  on every CPU (and thread, in pid mode) the member is opened with the
 *  leader's fd as group_fd, so they are scheduled and counted together, and
 *  a leader with PERF_SAMPLE_READ and read_format PERF_FORMAT_GROUP reads
 *  every member in each sample: perfring_sample_read_value() gives the
 *  leader first, then the members in the order they were added to the
 *  session. A member without a sample period (0) only counts. Members
 *  are opened enabled (attr.disabled = 0), so that the leader alone starts
 *  and stops the group (why: docs/API-NOTES.md). -EINVAL for
 *  NULL, events of different sessions, an event grouped with itself, a
 *  leader that is a member or a member that leads. The kernel refuses
 *  PERF_FORMAT_GROUP with inherit (pid mode) before Linux 6.13: start then
 *  fails with EINVAL. */
PERFRING_API int perfring_event_set_group(struct perfring_event *member,
					  struct perfring_event *leader);

/** The event that owns record id `id` on `cpu` (a sample's id, or one of a
 *  PERF_SAMPLE_READ block's), or NULL: an id of the CPU's own tracking
 *  event, one the session does not own, or an unwatched CPU. */
PERFRING_API struct perfring_event *perfring_session_event_of_id(const struct perfring_session *s,
								 int cpu, uint64_t id);

/** Adds a uprobe on the ELF file `path` at file offset `offset` (see
 *  perfring_uprobe_offset), or on the function's return with retprobe:
 *  the `uprobe` PMU (its type and retprobe bit from
 *  /sys/bus/event_source/devices/uprobe/), config1 = path, config2 =
 *  offset. Nothing is written to tracefs, so nothing is left behind: the
 *  probe lives as long as the session's fds. It fires in every process that
 *  runs that code (on the watched CPUs, or in opts.pid / opts.cgroup); the
 *  sample carries IDENTIFIER, IP, TID, TIME and CPU. Before start (-EBUSY
 *  after). -EINVAL for an empty path, -errno when path is not readable,
 *  -ENODEV without a uprobe PMU; a bad offset fails start with the
 *  kernel's EINVAL. */
PERFRING_API int perfring_session_add_uprobe(struct perfring_session *s, const char *path,
					     uint64_t offset, bool retprobe,
					     struct perfring_event **out);

/** The file offset of defined symbol `symbol` in ELF file `path`, for
 *  perfring_session_add_uprobe: read from .symtab, else .dynsym, by the
 *  library itself (bounds-checked against hostile files, fuzzed), its
 *  address mapped through the PT_LOAD segment holding it. 0; -ENOENT for
 *  no such symbol (or file); -ENOEXEC for a file that is not a 64-bit ELF
 *  of this machine's byte order, or a path that is a FIFO, device or
 *  socket; -EISDIR for a directory (none is ever opened for a blocking
 *  read). The file is read with pread, never mapped: if it shrinks while it
 *  is read (a linker rewriting it), the call returns -EAGAIN instead of
 *  taking a SIGBUS. The sentence (perfring_session_last_error(NULL)) names
 *  the file and the symbol, or what the path is. */
PERFRING_API int perfring_uprobe_offset(const char *path, const char *symbol, uint64_t *offset);

/** Sets the sample callback of ev (fn NULL = samples are counted, not passed). */
PERFRING_API int perfring_event_set_callback(struct perfring_event *ev, perfring_sample_fn fn,
					     void *ctx);

/** Sets a tracepoint filter (ftrace syntax, e.g. "common_pid == 123"),
 *  applied with PERF_EVENT_IOC_SET_FILTER at start; set it before start (else
 *  -EBUSY); NULL clears it.
 *  A filter the kernel refuses fails start with -EINVAL and a sentence quoting
 *  it. -EINVAL on a non-tracepoint event. R10: a filter of a page or more is
 *  -E2BIG here, naming the kernel's limit (page size - 1 bytes) and its length. */
PERFRING_API int perfring_event_set_filter(struct perfring_event *ev, const char *filter);

/** Looks up tracepoint field `name`. -ENOENT if absent, -EINVAL if ev is not a
 *  tracepoint. */
PERFRING_API int perfring_event_field(const struct perfring_event *ev, const char *name,
				      struct perfring_field *out);

/** "system:name" of a tracepoint, or a short description of other events. */
PERFRING_API const char *perfring_event_name(const struct perfring_event *ev);

/** The attr the event is (or will be) opened with, after forcing. */
PERFRING_API const struct perf_event_attr *perfring_event_attr(const struct perfring_event *ev);

/** Asks for kernel records (mask of PERFRING_REC_*) and sets their callback.
 *  Before start only. LOST and LOST_SAMPLES reach fn whatever the mask. */
PERFRING_API int perfring_session_set_record_callback(struct perfring_session *s, uint32_t mask,
						      perfring_record_fn fn, void *ctx);

/** Sets the callback of lost records (before start; -EBUSY after): called on
 *  the parsing thread each time a CPU's stats.lost grows, with the increase
 *  (never 0), whether from a LOST or LOST_SAMPLES record or from the
 *  kernel's own count read by the first parse of each CPU after
 *  perfring_session_stop() (R4). The increases add up to stats.lost
 *  exactly, where LOST records alone fall short (the kernel writes none for
 *  a ring that is full at the end): this is what a libbpf perf_buffer
 *  port's lost_cb becomes. fn NULL: none. No call after the session is
 *  freed inside a callback (R7). */
PERFRING_API int perfring_session_set_lost_callback(struct perfring_session *s,
						    void (*fn)(int cpu, uint64_t lost, void *ctx),
						    void *ctx);

/** Opens every event on every watched CPU (one leader per CPU, mmapped; every
 *  other event redirected into it with PERF_EVENT_IOC_SET_OUTPUT), then
 *  enables them (with opts.enable_on_exec, the kernel enables them at the
 *  process's next execve instead). On failure every fd and mapping is rolled
 *  back and the sentence gives the cause and fix. -EBUSY if already started, -EINVAL with
 *  no events and no record callback.
 *  R3: in pid mode, a thread that exits between the listing of
 *  /proc/PID/task and its perf_event_open (ESRCH) is skipped; start fails
 *  with -ESRCH only when the process itself is gone.
 *  R10: the sentence names the cause that applies: for EACCES in pid mode
 *  with kernel samples, exclude_kernel; on another user's process, the
 *  ptrace rule (same uid, or CAP_SYS_PTRACE); for EMFILE from any call
 *  (here or in a later wait's epoll_create1), RLIMIT_NOFILE; for a bare
 *  EINVAL, the attr field (sample_freq above perf_event_max_sample_rate,
 *  with its value; write_backward; exclude_* bits); an mmap ENOMEM is the
 *  address space or memory, never RLIMIT_MEMLOCK (that one is EPERM).
 *  R11: after perfring_session_stop(), start enables the same events again
 *  (a pause and resume): the rings, fds and stats carry on, and what ran
 *  while stopped is not counted. */
PERFRING_API int perfring_session_start(struct perfring_session *s);

/** Disables every event. Records already in the rings stay readable;
 *  perfring_session_start() resumes (R11).
 *  Losses add up, even at the end (R4): the kernel reports drops in a LOST
 *  record only with the next record that fits, so a ring full to the end
 *  never reports its last ones. The first parse of each CPU after stop (any
 *  form: parse_all, parse_for_cpu, cpu_next, a loop's) also reads the
 *  kernel's own count of every event's drops (read_format PERF_FORMAT_LOST,
 *  Linux 6.0+). Once it has run, samples delivered + stats.lost = records
 *  produced, exactly, on every CPU; a drop in both a LOST record and that
 *  count is counted once. */
PERFRING_API int perfring_session_stop(struct perfring_session *s);

#ifdef __cplusplus
}
#endif
#endif
