/* SPDX-License-Identifier: MIT */
/*
 * libperfring: read Linux perf_event ring buffers, one per CPU, and hand the
 * decoded records to callbacks, on whatever event loop the caller runs.
 *
 * Conventions
 *  - Functions returning int give 0 (or a count) on success and a negative
 *    errno on failure; perfring_strerror() turns one into text and
 *    perfring_session_last_error() gives a sentence with the cause and fix.
 *  - Options structs begin with `size_t sz` = sizeof(the struct). A zeroed
 *    field means its default. A larger struct from a newer header is accepted
 *    when its unknown tail is zero, else -E2BIG.
 *  - Objects are opaque and owned by the library. Nothing here is safe to call
 *    on one session from two threads at once, except parse_for_cpu (and its
 *    budgeted and pull forms) on *different* CPUs, and cpu_stats (R8).
 *  - R1: one parse of a ring at a time. A parse of a CPU's ring (parse_for_cpu,
 *    parse_for_cpu_n, cpu_next/commit, or a merged parse, which takes every
 *    ring) that starts while another parse of that ring runs, from one of its
 *    callbacks or from another thread, returns -EBUSY at once and delivers
 *    nothing; the running parse is not disturbed. One atomic claim per call.
 */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

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
	                                directory, -EINVAL for one outside cgroup v2,
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
	                                must be 0 (-EINVAL). The kernel still queues
	                                one irq_work per ring's worth of records (its
	                                watermark cannot be turned off; it is set to
	                                the whole ring) and nobody is woken by it */
	uint32_t follow_hotplug;   /**< non-zero (needs cpus NULL; not with
	                                overwrite): follow CPUs going offline and
	                                coming online. See "CPU hotplug" below
	                                perfring_session_cpu_stats */
};

/** One decoded PERF_RECORD_SAMPLE. Valid only during the callback (or, in the
 *  pull forms, until the next perfring_cpu_next(), _pull() or _commit()). Fields
 *  whose PERF_SAMPLE_* bit the event lacks are zero, with one exception: in
 *  the items of perfring_cpu_pull(), the fields after `record` (stream_id and
 *  the profiler's) are set only when the event's sample_type has their bit
 *  (perfring_event_attr(s->event)->sample_type), and otherwise hold whatever
 *  the item held. Read them under their bit, as a profiler does anyway. */
struct perfring_sample {
	struct perfring_event *event;  /**< the event that produced it */
	int cpu;                       /**< ring's CPU (PERF_SAMPLE_CPU when present) */
	uint32_t pid, tid;
	uint64_t time;                 /**< CLOCK_MONOTONIC ns */
	uint64_t id, ip, addr, period;
	const uint64_t *callchain;
	uint32_t callchain_nr;
	const void *raw;               /**< tracepoint payload (PERF_SAMPLE_RAW) */
	uint32_t raw_size;
	const struct perf_event_header *record; /**< whole record, contiguous */
	/* Below: set only under their sample_type bit in pulled items (above). */
	uint64_t stream_id;
	/* Profiler data, in the kernel's order. Each is zero (NULL) unless the
	 * event's sample_type has its bit; pointers point into the record. */
	const uint64_t *read;          /**< PERF_SAMPLE_READ: the struct read_format
	                                    (see perfring_sample_read_value) */
	uint32_t read_nr;              /**< counters in it: 1, or the group's nr */
	uint32_t read_format;          /**< the read_format it was written with */
	uint64_t time_enabled;         /**< PERF_FORMAT_TOTAL_TIME_ENABLED */
	uint64_t time_running;         /**< PERF_FORMAT_TOTAL_TIME_RUNNING */
	const struct perf_branch_entry *branches; /**< PERF_SAMPLE_BRANCH_STACK */
	uint64_t branch_nr;            /**< entries in branches */
	uint64_t branch_hw_idx;        /**< with PERF_SAMPLE_BRANCH_HW_INDEX in
	                                    attr.branch_sample_type, else 0 */
	uint64_t regs_user_abi;        /**< PERF_SAMPLE_REGS_USER: PERF_SAMPLE_REGS_ABI_*;
	                                    0 (a kernel thread): no registers */
	const uint64_t *regs_user;     /**< one u64 per bit of attr.sample_regs_user,
	                                    lowest bit first; NULL when abi is 0 */
	uint32_t regs_user_nr;         /**< values in regs_user */
	uint32_t regs_intr_nr;         /**< values in regs_intr */
	uint64_t regs_intr_abi;        /**< PERF_SAMPLE_REGS_INTR, as regs_user */
	const uint64_t *regs_intr;     /**< one u64 per bit of attr.sample_regs_intr */
	const uint8_t *stack_user;     /**< PERF_SAMPLE_STACK_USER: the bytes from the
	                                    user SP up; valid for stack_user_dyn_size */
	uint64_t stack_user_size;      /**< bytes the record holds (0: no user regs) */
	uint64_t stack_user_dyn_size;  /**< bytes the kernel could copy, <= size */
	uint64_t weight;               /**< PERF_SAMPLE_WEIGHT, or WEIGHT_STRUCT's u64:
	                                    var1_dw in bits 0-31, var2_w 32-47,
	                                    var3_w 48-63 */
	uint64_t data_src;             /**< PERF_SAMPLE_DATA_SRC (union perf_mem_data_src) */
	uint64_t transaction;          /**< PERF_SAMPLE_TRANSACTION (PERF_TXN_*) */
	uint64_t phys_addr;            /**< PERF_SAMPLE_PHYS_ADDR */
	uint64_t cgroup;               /**< PERF_SAMPLE_CGROUP: the cgroup id (as in
	                                    a PERF_RECORD_CGROUP; the inode of its
	                                    cgroup v2 directory) */
	uint64_t data_page_size;       /**< PERF_SAMPLE_DATA_PAGE_SIZE */
	uint64_t code_page_size;       /**< PERF_SAMPLE_CODE_PAGE_SIZE */
};

/** One counter of a PERF_SAMPLE_READ block. */
struct perfring_read_value {
	uint64_t value;
	uint64_t id;            /**< PERF_FORMAT_ID (always set by the library) */
	uint64_t lost;          /**< PERF_FORMAT_LOST (Linux 6.0+), else 0 */
};

/** Counter i (0 = the event itself, or the group leader with
 *  PERF_FORMAT_GROUP, then the members in the order they were grouped) of
 *  s's PERF_SAMPLE_READ block. -ENOENT without one, -ERANGE for i >= read_nr. */
PERFRING_API int perfring_sample_read_value(const struct perfring_sample *s, uint32_t i,
					    struct perfring_read_value *out);

/** Sample callback: return 0 to go on; non-zero stops the parse after this
 *  record, and nothing after it is lost (it is delivered by the next parse). */
typedef int (*perfring_sample_fn)(const struct perfring_sample *s, void *ctx);

/** Kernel (non-sample) records a session can ask for: OR these into the mask
 *  of perfring_session_set_record_callback(). LOST and LOST_SAMPLES always
 *  reach the record callback when one is set. */
enum perfring_record_mask {
	PERFRING_REC_COMM = 1u << 0,  /**< PERF_RECORD_COMM (attr.comm, comm_exec) */
	PERFRING_REC_MMAP = 1u << 1,  /**< PERF_RECORD_MMAP2 (attr.mmap, mmap2) */
	PERFRING_REC_TASK = 1u << 2,  /**< PERF_RECORD_FORK and EXIT (attr.task) */
	PERFRING_REC_SWITCH = 1u << 3,/**< PERF_RECORD_SWITCH(_CPU_WIDE) (context_switch) */
	PERFRING_REC_KSYMBOL = 1u << 4,   /**< PERF_RECORD_KSYMBOL (attr.ksymbol): kernel
	                                       symbols coming and going (BPF, JIT) */
	PERFRING_REC_BPF_EVENT = 1u << 5, /**< PERF_RECORD_BPF_EVENT (attr.bpf_event) */
	PERFRING_REC_CGROUP = 1u << 6,    /**< PERF_RECORD_CGROUP (attr.cgroup): a cgroup's
	                                       id and path, at its creation */
	PERFRING_REC_NAMESPACES = 1u << 7,/**< PERF_RECORD_NAMESPACES (attr.namespaces) */
	PERFRING_REC_TEXT_POKE = 1u << 8, /**< PERF_RECORD_TEXT_POKE (attr.text_poke) */
	PERFRING_REC_ALL = 0x1ffu,
};

/** One decoded kernel record. `type` is the PERF_RECORD_* value; the union
 *  member matching it is filled. Strings point into the record (NUL-terminated,
 *  checked). Valid only during the callback. PERF_RECORD_ITRACE_START and
 *  PERF_RECORD_AUX (of an event with an AUX area) need no mask bit: they are
 *  decoded whenever they appear. */
struct perfring_record {
	uint32_t type;                 /**< PERF_RECORD_* */
	uint16_t misc;                 /**< header misc bits */
	int cpu;                       /**< ring's CPU */
	uint32_t pid, tid;             /**< sample_id_all trailer (TID) */
	uint64_t time;                 /**< sample_id_all trailer (TIME), CLOCK_MONOTONIC */
	uint64_t id;                   /**< trailer IDENTIFIER */
	struct perfring_event *event;  /**< event that emitted it, or NULL (leader) */
	const struct perf_event_header *record; /**< whole record, contiguous */
	bool synthetic;                /**< made by a snapshot from /proc (see
	                                    perfring_snapshot_opts.synthesize), not
	                                    read from a ring: cpu is -1 */
	union {
		struct { uint32_t pid, tid; const char *comm; bool exec; } comm;
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } task; /**< FORK/EXIT */
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min; uint64_t ino, ino_generation;
			const uint8_t *build_id; uint8_t build_id_size; /**< if misc has MMAP_BUILD_ID */
			uint32_t prot, flags;
			const char *filename;
		} mmap;                        /**< MMAP2 (and MMAP: no maj..flags) */
		struct { uint64_t id, lost; } lost;          /**< LOST */
		struct { uint64_t lost; } lost_samples;      /**< LOST_SAMPLES */
		struct { uint64_t time, id, stream_id; } throttle; /**< (UN)THROTTLE */
		struct {
			bool out, preempt;
			uint32_t next_prev_pid, next_prev_tid;   /**< SWITCH_CPU_WIDE only */
		} context_switch;
		struct {
			uint64_t addr;
			uint32_t len;
			uint16_t ksym_type;    /**< PERF_RECORD_KSYMBOL_TYPE_* */
			uint16_t flags;        /**< PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
			const char *name;
		} ksymbol;                     /**< KSYMBOL */
		struct {
			uint16_t type;         /**< PERF_BPF_EVENT_PROG_LOAD or _UNLOAD */
			uint16_t flags;
			uint32_t id;           /**< the program's id (bpf(2)) */
			const uint8_t *tag;    /**< its 8-byte tag (BPF_TAG_SIZE) */
		} bpf_event;                   /**< BPF_EVENT */
		struct {
			uint64_t id;           /**< as PERF_SAMPLE_CGROUP gives it */
			const char *path;      /**< below the cgroup v2 mount, "/" first */
		} cgroup;                      /**< CGROUP */
		struct {
			uint32_t pid, tid;
			uint64_t nr;           /**< entries in links */
			const struct perf_ns_link_info *links; /**< dev and ino of each,
			                            at NET_NS_INDEX .. CGROUP_NS_INDEX */
		} namespaces;                  /**< NAMESPACES */
		struct {
			uint64_t addr;
			uint16_t old_len, new_len;
			const uint8_t *old_bytes, *new_bytes; /**< old_len, new_len bytes */
		} text_poke;                   /**< TEXT_POKE */
		struct { uint32_t pid, tid; } itrace_start; /**< ITRACE_START */
		struct { uint64_t aux_offset, aux_size, flags; } aux; /**< AUX (flags:
		                                    PERF_AUX_FLAG_*) */
	} u;
};

/** Kernel record callback; return value as for perfring_sample_fn. */
typedef int (*perfring_record_fn)(const struct perfring_record *r, void *ctx);

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

/** A tracepoint field, from the tracepoint's tracefs format file. */
struct perfring_field {
	const char *name;       /**< owned by the event */
	const char *type;       /**< the C type as tracefs gives it, e.g. "pid_t" */
	uint32_t offset;        /**< byte offset in the raw payload */
	uint32_t size;          /**< bytes (for __data_loc: 4, the locator) */
	uint32_t flags;         /**< PERFRING_FIELD_* */
	uint32_t elem_size;     /**< element size for arrays; else = size */
};
#define PERFRING_FIELD_SIGNED   (1u << 0) /**< signed integer */
#define PERFRING_FIELD_ARRAY    (1u << 1) /**< fixed array, e.g. char comm[16] */
#define PERFRING_FIELD_DATA_LOC (1u << 2) /**< __data_loc: offset/len locator */
#define PERFRING_FIELD_REL_LOC  (1u << 3) /**< __rel_loc: locator relative to field end */
#define PERFRING_FIELD_STRING   (1u << 4) /**< char array or __data_loc char[] */

/* ---------------------------------------------------------------- errors */

/** Text for a negative errno returned by this library (never NULL). */
PERFRING_API const char *perfring_strerror(int err);

/** A sentence about the last failure on this session: the CPU, event and
 *  syscall involved, and the fix. With s == NULL: the last failure of a call
 *  on this thread that had no session yet (perfring_session_new()). Never
 *  NULL; "" when there was none. Valid until the next failing call. */
PERFRING_API const char *perfring_session_last_error(const struct perfring_session *s);

/* --------------------------------------------------------------- session */

/** Validates opts (NULL = all defaults) and makes a session. Nothing is opened
 *  yet. -EINVAL for a bad field (the sentence names it), -ENODEV for an
 *  offline CPU, -E2BIG for a non-zero unknown opts tail, -ENOMEM.
 *  R10: ring_pages above the largest ring the kernel maps is -EINVAL, and the
 *  sentence names the largest value (the kernel keeps a pointer per page in
 *  one allocation of at most PAGE_SIZE << the largest order /proc/buddyinfo
 *  lists: 2^(page shift + order - 4) pages). */
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
 *  TID, TIME, CPU and RAW. -ENOENT for an unknown tracepoint, -ENODEV when no
 *  tracefs is mounted, -EBUSY after start. *out (may be NULL) is owned by s. */
PERFRING_API int perfring_session_add_tracepoint(struct perfring_session *s,
						 const char *system, const char *name,
						 struct perfring_event **out);

/** Adds a software event sampling every `period` events (0 = 1).
 *  One event of a kind per session (R12): a second one of the same kind, or
 *  one of the type and config of an add_attr event, is -EEXIST with a
 *  sentence. Linux fills a software sample's ID and TIME once per overflow
 *  and reuses them for every event of that kind on the CPU, so the second
 *  event's samples would go to the first, or be decoded with the wrong
 *  layout. Records of ids the session does not own (another session's
 *  event of the same kind can put them in its rings) are counted in
 *  stats.unknown and never delivered as samples. */
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

/** Reads a BPF program's bpf_perf_event_output() records: libbpf's
 *  perf_buffer on any loop (before start; -EBUSY after). map_fd is a
 *  BPF_MAP_TYPE_PERF_EVENT_ARRAY (the session keeps its own fd of it, so the
 *  caller may close theirs).
 *  - At start, for each watched CPU, it opens a PERF_COUNT_SW_BPF_OUTPUT
 *    software event (sample_period 1, RAW plus IDENTIFIER, TID, TIME, CPU,
 *    CLOCK_MONOTONIC), redirects it into that CPU's ring and stores its fd
 *    in the map at key = the CPU. perfring_session_free() deletes exactly
 *    the entries it wrote; an entry it did not write (a CPU it does not
 *    watch) is left as it is. The map holds a reference to each event's
 *    file, so an entry left behind would keep the event alive.
 *  - bpf_perf_event_output(ctx, &map, BPF_F_CURRENT_CPU, data, n) then
 *    arrives as a sample of *out: raw/raw_size are the kernel's RAW payload,
 *    the n bytes padded so that the record stays 8-byte aligned (raw_size =
 *    round_up(n + 4, 8) - 4, as libbpf's perf_buffer passes it); pid/tid are
 *    the task the program ran in; time is CLOCK_MONOTONIC, the clock of
 *    bpf_ktime_get_ns(), so merged parses order these samples with the
 *    session's other events. Drops count as for any ring (LOST, R4).
 *  - On a CPU the session does not watch, the program's output call fails
 *    (-ENOENT: no entry), and while the session is stopped (-EOPNOTSUPP: the
 *    event is disabled).
 *  - Scope: the event is CPU-wide whatever opts.pid is (or a cgroup scope),
 *    because the program, not the event, decides what is written: in pid
 *    mode every output of the program on a watched CPU arrives, in any
 *    task's context, so a program that should see one process tests its
 *    tgid (bpf_get_current_pid_tgid). With enable_on_exec it is enabled at
 *    start, not at the exec. Where the kernel refuses to redirect it into a
 *    scoped ring (PERF_EVENT_IOC_SET_OUTPUT), start fails with its sentence.
 *  - Several maps on one session each get their own event per CPU. A map
 *    has one entry per CPU, so one reader: the same map twice on a session
 *    is -EEXIST. Two readers of one map at a time (two sessions, or one
 *    and a perf_buffer) do not work: the later start replaces the earlier
 *    one's entries on the CPUs both watch, and the earlier free deletes the
 *    later one's (a PERF_EVENT_ARRAY cannot be read back to tell).
 *  Errors: -EBADF when map_fd is not a BPF map (not open, not BPF, or another
 *  BPF object); -EINVAL when the map is not a PERF_EVENT_ARRAY; -E2BIG at
 *  start when max_entries is not above the highest watched CPU (the
 *  sentence names both). The bpf(2) calls are the library's own
 *  (BPF_OBJ_GET_INFO_BY_FD, BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM): no
 *  libbpf is linked. *out (may be NULL) is owned by s. */
PERFRING_API int perfring_session_add_bpf_output(struct perfring_session *s, int map_fd,
						 struct perfring_event **out);

/** Puts member into leader's group (before start; else -EBUSY). At start,
 *  on every CPU (and thread, in pid mode) the member is opened with the
 *  leader's fd as group_fd, so they are scheduled and counted together, and
 *  a leader with PERF_SAMPLE_READ and read_format PERF_FORMAT_GROUP reads
 *  every member in each sample: perfring_sample_read_value() gives the
 *  leader first, then the members in the order they were added to the
 *  session. A member without a sample period (0) only counts. Members
 *  are opened enabled (attr.disabled = 0), so that the leader alone starts
 *  and stops the group: on Linux 6.18, a member enabled while its leader
 *  already ran was sometimes never scheduled. -EINVAL for
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
 *  no such symbol (or file), -ENOEXEC for a file that is not a 64-bit ELF
 *  of this machine's byte order; the sentence (perfring_session_last_error
 *  (NULL)) names the file and the symbol. */
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

/*
 * Typed field accessors. Each reads field f of the sample's RAW payload,
 * checking bounds: 0 on success, -EINVAL when the field's size or kind does
 * not fit the accessor, -ERANGE when it would read past the payload.
 * The _uint/_int forms accept any integer size of 1, 2, 4 or 8 and widen.
 */
PERFRING_API int perfring_field_u8(const struct perfring_field *f, const struct perfring_sample *s, uint8_t *out);
PERFRING_API int perfring_field_u16(const struct perfring_field *f, const struct perfring_sample *s, uint16_t *out);
PERFRING_API int perfring_field_u32(const struct perfring_field *f, const struct perfring_sample *s, uint32_t *out);
PERFRING_API int perfring_field_u64(const struct perfring_field *f, const struct perfring_sample *s, uint64_t *out);
PERFRING_API int perfring_field_s8(const struct perfring_field *f, const struct perfring_sample *s, int8_t *out);
PERFRING_API int perfring_field_s16(const struct perfring_field *f, const struct perfring_sample *s, int16_t *out);
PERFRING_API int perfring_field_s32(const struct perfring_field *f, const struct perfring_sample *s, int32_t *out);
PERFRING_API int perfring_field_s64(const struct perfring_field *f, const struct perfring_sample *s, int64_t *out);
PERFRING_API int perfring_field_uint(const struct perfring_field *f, const struct perfring_sample *s, uint64_t *out);
PERFRING_API int perfring_field_int(const struct perfring_field *f, const struct perfring_sample *s, int64_t *out);
/** A char array or __data_loc/__rel_loc string: *str points into the payload
 *  and *len is its length up to the first NUL (or the field's end). */
PERFRING_API int perfring_field_str(const struct perfring_field *f, const struct perfring_sample *s,
				    const char **str, size_t *len);
/** A fixed or dynamic (__data_loc) array: its bytes in the payload. */
PERFRING_API int perfring_field_array(const struct perfring_field *f, const struct perfring_sample *s,
				      const void **data, size_t *bytes);

/** Asks for kernel records (mask of PERFRING_REC_*) and sets their callback.
 *  Before start only. LOST and LOST_SAMPLES reach fn whatever the mask. */
PERFRING_API int perfring_session_set_record_callback(struct perfring_session *s, uint32_t mask,
						      perfring_record_fn fn, void *ctx);

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

/* ------------------------------------------------- level 2: per-CPU fds */

struct perfring_cpu_fd { int cpu; int fd; };

/** The {cpu, fd} pairs of the watched CPUs, sorted by CPU: one per ring, only
 *  for CPUs in opts.cpus. The fds are owned by the session and stay valid
 *  until perfring_session_free(); never close them. With follow_hotplug only
 *  the CPUs open now are listed: an offline CPU's fd is closed, and the
 *  array changes at each change (read it again after the cpu callback). Returns the count (0
 *  before start). Readiness on them is one-shot: drain the ring to its head on
 *  each wakeup (or come back without one, see parse_for_cpu_n). */
PERFRING_API size_t perfring_session_fds(const struct perfring_session *s,
					 const struct perfring_cpu_fd **out);

/** The fd of `cpu`'s ring, or -ENOENT if the session does not watch it. */
PERFRING_API int perfring_session_fd_for_cpu(const struct perfring_session *s, int cpu);

/** Drains only `cpu`'s ring, firing callbacks; never sleeps or blocks.
 *  Returns the samples handled, -ENOENT, -EBUSY while another parse holds
 *  that ring (R1; this thread's own uncommitted pull batch is committed
 *  instead), or -ECANCELED when a callback freed the session (R7). Safe
 *  concurrently with calls for other CPUs. */
PERFRING_API int perfring_session_parse_for_cpu(struct perfring_session *s, int cpu);

/** As parse_for_cpu, handling at most `max` records (samples and kernel
 *  records; 0 = no limit). *more (may be NULL) is set when records remain:
 *  the fd will not fire again for them, so the caller must come back. */
PERFRING_API int perfring_session_parse_for_cpu_n(struct perfring_session *s, int cpu,
						  uint32_t max, bool *more);

/*
 * Pull form ("drain_cpu"): iterate one CPU's records yourself.
 *   while ((k = perfring_cpu_next(s, cpu, &smp, &rec)) > 0) { ... }
 *   perfring_cpu_commit(s, cpu);
 * perfring_cpu_next() returns PERFRING_NEXT_SAMPLE with *sample filled,
 * PERFRING_NEXT_RECORD with *rec filled (a kernel record), 0 when the ring is
 * empty (as of the first next since the last commit) or -errno. Callbacks are
 * not called. The returned data stays valid until the next call of either
 * function (or perfring_cpu_pull) for that CPU. One record a call costs a
 * call's overhead a record (bench/parse: 6-7x the bare walk, against 1.2x
 * for parse_for_cpu); perfring_cpu_pull below takes many a call. perfring_cpu_commit() hands everything returned so
 * far back to the kernel (a release store of data_tail); until then that space
 * stays reserved. At the end of what it saw, next reads the head again, so a
 * next that returned 0 needs no commit to see records written later; a 0 with
 * nothing uncommitted ends the batch. A pull batch holds its ring until the
 * commit (R1): other threads' parses of it get -EBUSY, while a parse of the
 * same CPU by the thread that pulled commits the batch. Stats count records
 * as they are returned.
 */
#define PERFRING_NEXT_SAMPLE 1
#define PERFRING_NEXT_RECORD 2
PERFRING_API int perfring_cpu_next(struct perfring_session *s, int cpu,
				   struct perfring_sample *sample, struct perfring_record *rec);
PERFRING_API int perfring_cpu_commit(struct perfring_session *s, int cpu);

/*
 * Batch pull: many records of one CPU a call, for loops (and bindings) that
 * consume records themselves.
 *   struct perfring_item it[64];
 *   while ((n = perfring_cpu_pull(s, cpu, it, 64)) > 0)
 *       for (i = 0; i < n; i++) ... it[i].kind, it[i].u.sample or it[i].u.record ...
 *   perfring_cpu_commit(s, cpu);
 * Fills up to max items, each a sample (kind PERFRING_NEXT_SAMPLE, u.sample)
 * or a kernel record (PERFRING_NEXT_RECORD, u.record) decoded as the
 * callbacks would see it, in ring order, and returns how many: 0 when the
 * ring is empty, or -errno: -EINVAL for max 0 (which could not tell "empty"
 * from "no room"), -ENOENT, -EBUSY (R1, as for perfring_cpu_next), and
 * -ECANCELED (R7). Callbacks are not called. Every field of a returned item
 * up to u.sample.record is set (those the event's sample_type lacks are
 * zero); stream_id and the profiler's fields, after it, only when the
 * event's sample_type has their bit (writing 176 bytes of zeros an item
 * would double the pull's cost; see struct perfring_sample).
 * perfring_cpu_pull_opts() with PERFRING_PULL_PRESENT_ONLY leaves out the
 * zeros up to record too.
 * Each pull sees every record written before it began that has not been
 * returned yet; a pull that returns fewer than max found the ring empty.
 * The items, and whatever they point to, stay valid until the next pull,
 * next or commit of that CPU (or a parse of it by this thread, which
 * commits). perfring_cpu_commit() hands everything returned so far back to
 * the kernel; until then that space stays reserved, so commit once the
 * items are used, or the kernel starts dropping. A pull that returns 0 ends
 * the batch itself: what was returned before is committed (it was valid
 * only until this pull) and the ring is free for other threads, so a loop
 * that pulls until 0 needs no commit at all, and sees later records at its
 * next pull.
 * Records are not copied, except the few that wrap around the ring's end:
 * those are copied into the CPU's 64 KiB scratch (PERFRING_PULL_SCRATCH),
 * one after the other, so all of a pull's items stay valid together. A pull
 * stops early, before a wrapped record that no longer fits what is left of
 * that scratch (the next pull returns it); every record fits an empty one.
 * The kernel writes at most one wrapped record per lap of the ring, so this
 * limit binds only on rings the kernel did not write.
 * perfring_cpu_next(), pull and commit work on one batch: they may be mixed.
 * Stats count records as they are returned. Safe concurrently with calls
 * for other CPUs.
 */
#define PERFRING_PULL_SCRATCH 65536u
struct perfring_item {
	int kind;                      /**< PERFRING_NEXT_SAMPLE or PERFRING_NEXT_RECORD */
	union {
		struct perfring_sample sample;
		struct perfring_record record;
	} u;
};
PERFRING_API int perfring_cpu_pull(struct perfring_session *s, int cpu,
				   struct perfring_item *items, size_t max);

/** perfring_cpu_pull_opts() flag: a sample item's optional fields are set
 *  only when its event's sample_type has their bit. event, cpu, pid, tid,
 *  time, id and record, which every sample has, are always set; ip, addr,
 *  period, callchain and callchain_nr, raw and raw_size without their bit
 *  hold what the item held or zero, as stream_id and the profiler's fields
 *  always do. (Today the fast path leaves them alone for samples of the
 *  forced fields and of tracepoints; every other sample gets its zeros.)
 *  For loops that read fields under their bit, as a binding that maps
 *  sample_type to optional fields does: the zeros are a third of a
 *  tracepoint item's bytes and 0.1-0.2x the bare walk's time
 *  (bench/RESULTS.md). */
#define PERFRING_PULL_PRESENT_ONLY (1u << 0)

/** Options for perfring_cpu_pull_opts(). NULL = defaults. */
struct perfring_pull_opts {
	size_t sz;      /**< sizeof(struct perfring_pull_opts) */
	uint32_t flags; /**< PERFRING_PULL_PRESENT_ONLY, or 0; others -EINVAL */
};

/** perfring_cpu_pull with opts (NULL: exactly perfring_cpu_pull). The same
 *  batch, rules and errors; opts' errors as for every opts struct (-EINVAL,
 *  -E2BIG for a larger struct with a non-zero tail). Pulls with different
 *  flags may be mixed in one batch. */
PERFRING_API int perfring_cpu_pull_opts(struct perfring_session *s, int cpu,
					struct perfring_item *items, size_t max,
					const struct perfring_pull_opts *opts);

/** Per-CPU counters since start. */
struct perfring_cpu_stats {
	uint64_t records;       /**< records read (samples and kernel records) */
	uint64_t bytes;         /**< bytes read */
	uint64_t lost;          /**< records the kernel dropped: LOST and
	                             LOST_SAMPLES records, and after stop the drops
	                             no LOST record reported (R4, see stop) */
	uint64_t corrupt;       /**< bad records skipped (header, overrun, field) */
	uint64_t wakeups;       /**< kernel readiness wakeups handled */
	uint32_t max_fill_pct;  /**< highest ring fill seen at a read */
	uint32_t hup;           /**< 1 once the ring's end was reported: its fd's HUP
	                             (in pid mode, the process's exit, R2), after the
	                             last drain. A report, not a control */
	uint64_t samples;       /**< PERF_RECORD_SAMPLE records delivered */
	uint64_t late;          /**< merged parses: records older than one a merged
	                             parse already delivered (see below) */
	uint64_t unknown;       /**< records of unknown type or of an id this
	                             session does not own, skipped (R12) */
	uint64_t flushes;       /**< timer (flush/poll) passes that read this ring */
	uint64_t overwritten;   /**< opts.overwrite: BYTES the kernel wrote into this
	                             ring that no snapshot delivered because newer
	                             records overwrote them first (or tore the oldest
	                             one). Bytes, exact: the kernel's head positions
	                             give them, while the number of records they
	                             held is unknowable once overwritten. Never in
	                             lost: lost counts what the kernel dropped
	                             (while a snapshot paused the ring) */
};

/** Copies `cpu`'s counters. -ENOENT for an unwatched CPU. R8: callable from
 *  any thread while parses run: each counter is read whole and counters only
 *  grow, but the copy is not a snapshot across counters. */
PERFRING_API int perfring_session_cpu_stats(const struct perfring_session *s, int cpu,
					    struct perfring_cpu_stats *out);

/*
 * CPU hotplug (opts.follow_hotplug, with opts.cpus NULL). The session's CPU
 * set is every possible CPU (/sys/devices/system/cpu/possible), sized once
 * at perfring_session_new, so nothing of it moves while a callback runs;
 * the CPUs online at start are opened, the rest wait.
 *  - The signal: a NETLINK_KOBJECT_UEVENT socket, watched by every reactor
 *    attached to the session (each through its driver's watch(), as the slot
 *    after its CPUs' slots) and by the session's own waits, tells of a change
 *    at once. /sys/devices/system/cpu/online is also read again at each
 *    flush (a reactor's timer; parse_all and the sleep-polling wait at most
 *    every 100 ms), which is all there is where the socket cannot be had
 *    and what catches lost uevents (or none at all, in a network namespace
 *    other than the first); with PERFRING_FLUSH_NEVER only the socket
 *    tells. A message only says "look again": each change is confirmed
 *    against the online list, since uevents can be lost or reordered.
 *  - Offline: every reactor drains the ring to its head and stops watching
 *    its slot, the session reads the kernel's drop counts (R4) and closes
 *    the CPU's fds. Its stats carry on; perfring_session_fds() no longer
 *    lists it, fd_for_cpu gives -ENOENT, parse_for_cpu reads it as empty.
 *  - Online: the CPU's events are opened, redirected, filtered, mapped and
 *    enabled as at start, BPF output map entries too (after a stop they
 *    wait for the next start). An offline CPU's map entries are deleted. Every
 *    reactor watches its slot again, with the new fd, and drains it once.
 *    A failure to open is reported through the cpu callback (online false)
 *    and perfring_session_last_error(); the session goes on with the other
 *    CPUs and tries that one again only after it has gone offline.
 *  - Merged parses take a ring that appears mid-stream as any other: its
 *    first records may be older than ones already delivered, and those are
 *    counted in stats.late.
 *  - Changes are made on the thread that notices them, inside a reactor
 *    call (perfring_reactor_on_ready/_on_timer), parse_for_duration,
 *    parse_until or parse_all (which looks at most every 100 ms), never
 *    inside a parse of a ring: so every reactor of a following session
 *    runs on one thread. parse_for_cpu and the pull form never make them:
 *    a loop of one's own (level 2) calls perfring_session_hotplug_sync()
 *    when perfring_session_hotplug_fd() is readable, and at its flush.
 *  - enable_on_exec applies to the CPUs of the start: a CPU that comes
 *    online later is enabled at once.
 * Tests replace /sys with PERFRING_TEST_SYSFS and the uevent socket with
 * PERFRING_TEST_UEVENT_FD (test-only; see docs/HOTPLUG.md).
 */

/** After each change of a following session, fn(cpu, online, ctx): online
 *  true once the CPU's ring is open and watched, false once it is closed
 *  (or its open failed: perfring_session_last_error() says why). Called on
 *  the parsing thread from inside a parse or reactor call (see above); fn
 *  may call perfring_session_fds() (which already reflects the change) and
 *  perfring_session_free() (R7). Set before start; fn NULL removes it.
 *  -EINVAL without opts.follow_hotplug, -EBUSY after start. */
PERFRING_API int perfring_session_set_cpu_callback(struct perfring_session *s,
						   void (*fn)(int cpu, bool online, void *ctx),
						   void *ctx);

/** Level 2: the hotplug notifier of a started following session, a
 *  socket to watch for reading with the rings' fds; when it is readable,
 *  call perfring_session_hotplug_sync(). Owned by the session. -ENOENT when
 *  there is none: the session does not follow hotplug, is not started, or
 *  could not have the uevent socket (then only a sync at the loop's flush
 *  sees changes). -EINVAL for NULL. */
PERFRING_API int perfring_session_hotplug_fd(const struct perfring_session *s);

/** Level 2: reads the notifier, if any, and the online CPU list, and makes
 *  every change it shows, as a reactor does: a CPU that left is drained
 *  (its records reach their callbacks) and closed, one that came is opened
 *  and enabled; the cpu callback reports each; perfring_session_fds() then
 *  lists the new set, and a returned CPU has a new fd to watch (epoll
 *  drops a closed fd by itself, unless a copy of it is open, as in a
 *  child). Call it when perfring_session_hotplug_fd() is readable, and at
 *  the loop's flush interval, because uevents can be lost (a read of a
 *  small sysfs file). Returns the samples the drains of CPUs
 *  that left delivered, -EINVAL (NULL, no follow_hotplug, before start),
 *  -EBUSY inside a parse of s (from a callback), or -ECANCELED when a
 *  callback freed the session (R7). Call it on the thread that runs the
 *  loop, not concurrently with other calls on s (every reactor's rule). */
PERFRING_API int perfring_session_hotplug_sync(struct perfring_session *s);

/** The slots a reactor of s may use: one per CPU of the session's set (for
 *  a following session, every possible CPU) plus, when following, one for
 *  the hotplug notifier. A driver sizes its per-slot state with it, not
 *  with perfring_session_fds(), whose count changes. 0 for NULL. */
PERFRING_API size_t perfring_session_slots(const struct perfring_session *s);

/* ---------------------------------------------- time-ordered across CPUs */

/*
 * Merged parses take a snapshot of every ring's head and deliver all records
 * up to it in time order: each record delivered is the oldest of the rings'
 * next records, equal times in CPU order, so the output is in non-decreasing
 * time whenever each ring's own records are. A record without a time, such
 * as one of an id the session does not own, goes out as soon as its ring is
 * next. A record older than one a merged parse already delivered is counted
 * in its CPU's stats.late: across calls, one that was still being written at
 * the snapshot; within a call, one whose ring went back in time. How the
 * order is found (a loser tree over the rings' next records; when the rings
 * interleave finely, batches of every ring's next records placed into
 * buckets by time) never changes it. A callback must not start another
 * parse of its own session.
 */

/** Drains what is in every ring now, time-ordered. Never blocks or sleeps. */
PERFRING_API int perfring_session_parse_all(struct perfring_session *s);

/** Repeats parse_all for `ns` nanoseconds. Default mode sleeps
 *  poll_interval_ms after an empty pass; wakeup mode blocks on the kernel's
 *  readiness with an internal epoll set, draining all rings every flush_ms
 *  on a timerfd in the same set (both fds are opened by the first such
 *  wait and kept until perfring_session_free). In pid mode it returns once
 *  the process has exited and its rings are drained (R2). Returns the total
 *  samples handled, -EBUSY while another parse holds a ring (R1), or
 *  -ECANCELED when a callback freed the session (R7). */
PERFRING_API int perfring_session_parse_for_duration(struct perfring_session *s, uint64_t ns);

/** As parse_for_duration, until should_stop(ctx) returns true (checked after
 *  every pass and wakeup) or a callback asks to stop. */
PERFRING_API int perfring_session_parse_until(struct perfring_session *s,
					      bool (*should_stop)(void *ctx), void *ctx);

/* ------------------------------------------ flight recorder (overwrite) */

/** How a snapshot waits, after pausing the rings, for the records the kernel
 *  had begun to write before the pause (perfring_snapshot_opts.wait). */
enum perfring_snapshot_wait {
	/** One RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL)): some 10 ms
	 *  idle and 20 ms loaded here. Nothing a CPU runs can hold it. */
	PERFRING_SNAPSHOT_WAIT_GRACE = 0,
	/** The calling thread runs on each watched CPU in turn (the kernel writes
	 *  a CPU's ring on that CPU, with preemption off), then gets its CPU
	 *  affinity back: 30 us a CPU idle, a scheduler slice (1.5-3 ms here) a
	 *  busy one, so the pause drops 7.6 times fewer records under a running
	 *  stream (bench/pause in bench/RESULTS.md). But the call
	 *  waits until every watched CPU runs it: one monopolised by a real-time
	 *  task (with RT throttling off) holds it as long. Where the thread may
	 *  not run on a CPU (a cpuset without it), the grace period instead. */
	PERFRING_SNAPSHOT_WAIT_VISIT = 1,
};

/** Options for perfring_session_snapshot_opts(). NULL = defaults. */
struct perfring_snapshot_opts {
	size_t sz;                 /**< sizeof(struct perfring_snapshot_opts) */
	uint32_t synthesize;       /**< PERFRING_REC_COMM | PERFRING_REC_MMAP, or 0:
	                                before the rings' records, the record callback
	                                gets synthetic COMM (one per thread, from
	                                /proc/PID/task/TID/comm) and MMAP2 records
	                                (one per executable mapping, from
	                                /proc/PID/maps) of the watched tasks (opts.pid's
	                                process, else every process), as perf's
	                                --tail-synthesize makes them, so a snapshot
	                                that holds no MMAP records of its own can be
	                                symbolized. They have record->synthetic set,
	                                cpu -1, event NULL, and time = the oldest time
	                                in the snapshot (now when it is empty). Needs a
	                                record callback (-EINVAL); other bits -EINVAL */
	uint32_t wait;             /**< enum perfring_snapshot_wait; default GRACE,
	                                another value -EINVAL */
};

/*
 * Snapshots of an overwrite session (opts.overwrite), the flight recorder:
 *  1. pauses output on every ring (PERF_EVENT_IOC_PAUSE_OUTPUT), then waits
 *     until a record the kernel had begun to write before the pause is
 *     complete: one RCU grace period (membarrier(MEMBARRIER_CMD_GLOBAL),
 *     10-20 ms here), or with PERFRING_SNAPSHOT_WAIT_VISIT a visit of the
 *     calling thread to each watched CPU (faster, see there). A record
 *     produced while paused is dropped by the kernel and counted as lost (a
 *     LOST record in the next snapshot, and the per-event counts after stop:
 *     R4 holds), never hidden;
 *  2. copies the bytes written since the previous snapshot (at most a ring)
 *     and resumes output at once: the pause lasts the wait and the copy,
 *     never the delivery (when no ring got anything since the previous
 *     snapshot there is no pause at all);
 *  3. finds the complete records by walking from the head, newest first, as
 *     perf's overwrite_rb_find_range does, up to the previous snapshot's head
 *     or the first record the kernel overwrote in part; a header no kernel
 *     writes (size 0, under 8, unaligned, past the end) ends the walk and is
 *     counted in stats.corrupt;
 *  4. delivers them oldest first through the usual callbacks, time-ordered
 *     across CPUs by the merged parse (stats, R7 and the late rule as for
 *     parse_all).
 * Stats count what snapshots deliver (records, bytes, samples, lost,
 * corrupt), and max_fill_pct the largest share of a ring one snapshot held.
 * Returns the samples delivered. A later snapshot delivers only records
 * written after the previous one; what newer records overwrote before a
 * snapshot is counted in stats.overwritten (bytes), never in lost.
 * A callback returning non-zero stops the delivery after that record; the
 * rest of that snapshot is kept and delivered first by the next call, before
 * it takes a new snapshot. -EOPNOTSUPP without opts.overwrite, -EINVAL
 * before start, -EBUSY from inside a snapshot's callback or while another
 * thread snapshots. Works while started or stopped. The copies take two
 * buffers of a ring's size per CPU, allocated by the first snapshot.
 * Without a wait (no membarrier: ENOSYS, or EINVAL under nohz_full; with
 * WAIT_VISIT, and a CPU the thread cannot run on) it is a re-read of the
 * head after the copy, and the bytes the kernel wrote over meanwhile are
 * left out: a writer caught between reserving and publishing its record
 * could still tear the oldest one, which only the waits rule out.
 */
PERFRING_API int perfring_session_snapshot(struct perfring_session *s);

/** perfring_session_snapshot() with options (NULL = the same). */
PERFRING_API int perfring_session_snapshot_opts(struct perfring_session *s,
						const struct perfring_snapshot_opts *opts);

/* --------------------------------------------------- reactor (loop glue) */

/** Options for attaching a session to an event loop (the adapters and
 *  perfring_reactor_new()). NULL = defaults. */
struct perfring_loop_opts {
	size_t sz;                 /**< sizeof(struct perfring_loop_opts) */
	const int *cpus;           /**< subset of the session's CPUs; NULL = all */
	size_t cpu_cnt;
	uint32_t budget;           /**< max records per callback; 0 = drain fully */
	uint32_t flush_ms;         /**< drain every ring this often even without a
	                                wakeup; 0 = the session's flush_ms (wakeup
	                                mode) or poll_interval_ms (default mode);
	                                PERFRING_FLUSH_NEVER = never */
	void (*on_error)(int cpu, int err, void *ctx); /**< HUP (-EPIPE) or an
	                                error (-EIO) on a CPU's fd: that fd is no
	                                longer watched; or the loop refused a soon
	                                turn (that CPU's records wait for the next
	                                flush) or, with cpu -1, re-arming the timer */
	void *ctx;
};

/*
 * The reactor: a started session on any event loop. It owns every rule of
 * the loop: when to drain a ring, when to come back to a drain the budget cut
 * short, when to flush, the drain after attaching, when to stop watching a
 * fd that reported its end (HUP, after a last drain), and when to free. A
 * loop is four operations, which a driver translates into its own calls:
 *
 *   watch(loop, slot, fd, on)  start (on) or stop reporting fd's readability
 *                              as `slot`: call perfring_reactor_on_ready(r,
 *                              slot, revents) when it is readable
 *   soon(loop, on)             call perfring_reactor_on_soon(r) once on a
 *                              coming loop turn, after other ready watchers
 *                              and due timers (an idle or zero timer); !on:
 *                              cancel
 *   timer(loop, ms)            call perfring_reactor_on_timer(r) once after
 *                              ms; 0 = disarm. One timer: re-arming replaces it
 *   destroy(loop)              release what the driver made (it may finish
 *                              later, as uv_close does), then call
 *                              perfring_reactor_destroyed(r)
 *
 * Each returns 0 or a negative errno (destroy returns nothing). The reactor
 * calls them only from perfring_reactor_* calls on the loop's thread, and
 * never calls a watched slot's watch(on) twice. A driver of some 40 lines
 * is enough: see examples/epoll-reactor.c and the three adapters.
 *
 * Readiness on perf fds is one-shot and registering a fd (epoll_ctl ADD)
 * consumes one already pending: the reactor drains every ring when created.
 * A loop that registers fds only when it next polls (libuv, libev) says so
 * with PERFRING_LOOP_WATCH_LATE, and the reactor drains every ring again on
 * its first two soon() turns, one of which comes after the registration.
 */
struct perfring_reactor;

struct perfring_loop_ops {
	size_t sz;                 /**< sizeof(struct perfring_loop_ops) */
	int (*watch)(void *loop, size_t slot, int fd, bool on);
	int (*soon)(void *loop, bool on);
	int (*timer)(void *loop, uint32_t ms);
	void (*destroy)(void *loop);
	uint32_t flags;            /**< PERFRING_LOOP_* */
};

/** watch() takes effect at the loop's next poll, not at once. */
#define PERFRING_LOOP_WATCH_LATE (1u << 0)

/** Attaches started session s to a loop through ops, with opts (NULL =
 *  defaults): watches every slot's fd (one per CPU of opts->cpus, in that
 *  order, else every CPU of the session in order: slot i is the i-th),
 *  arms the flush timer (opts->flush_ms, else the session's flush_ms in
 *  wakeup mode or poll_interval_ms in default mode; none for
 *  PERFRING_FLUSH_NEVER) and drains every ring once. *out is set before
 *  any callback of the session runs, so a callback may free r.
 *  A session following hotplug (opts.follow_hotplug) has a slot per
 *  possible CPU (an offline one is not watched) and one more, after them,
 *  for its hotplug notifier, a socket watched like a ring's fd; size the
 *  driver's per-slot state with perfring_session_slots(). A slot whose CPU
 *  went offline is unwatched, and when it comes back watched again with
 *  a new fd.
 *  -EINVAL for NULL s, ops or out, or ops without one of its four
 *  functions or with sz too small: then no operation is called. Any other
 *  failure (-EINVAL before start or for bad opts, -ENOENT for a CPU the
 *  session does not watch, -ENOMEM, or the error an operation returned)
 *  calls ops->destroy(loop) before it returns, with *out already NULL (so
 *  the driver's perfring_reactor_destroyed(NULL) does nothing), so a driver
 *  releases its state in destroy() alone. */
PERFRING_API int perfring_reactor_new(struct perfring_session *s,
				      const struct perfring_loop_opts *opts,
				      const struct perfring_loop_ops *ops, void *loop,
				      struct perfring_reactor **out);

/** The driver: slot's fd is ready. revents holds POLLIN, POLLHUP and
 *  POLLERR bits as the loop reports them (some loops fold a HUP into
 *  "readable": in pid mode the reactor asks poll(2) itself). The reactor
 *  drains the ring (budget records at most, then again on soon()); after a
 *  HUP or an error it drains the ring to its end, stops watching it and
 *  calls opts->on_error(cpu, -EPIPE or -EIO) once. */
PERFRING_API void perfring_reactor_on_ready(struct perfring_reactor *r, size_t slot,
					    uint32_t revents);
/** The driver: the turn asked for with soon(loop, true) has come. */
PERFRING_API void perfring_reactor_on_soon(struct perfring_reactor *r);
/** The driver: the timer armed with timer(loop, ms) has expired. */
PERFRING_API void perfring_reactor_on_timer(struct perfring_reactor *r);

/** Stops every watch, the soon turn and the timer at once, so no callback of
 *  the session runs after this call, not even the rest of the drain in
 *  progress; then calls the driver's destroy() once (when the outermost
 *  perfring_reactor_* call returns, if called from inside one), and frees r
 *  when the driver calls perfring_reactor_destroyed(). Safe inside any
 *  callback; a second call, and a call with NULL, do nothing. */
PERFRING_API void perfring_reactor_free(struct perfring_reactor *r);
/** As perfring_reactor_free, then done(ctx) (may be NULL) once r is freed,
 *  after the driver's perfring_reactor_destroyed(). A call while r is
 *  already being freed does nothing: done stays the first call's. */
PERFRING_API void perfring_reactor_free_then(struct perfring_reactor *r, void (*done)(void *ctx),
					     void *ctx);
/** The driver: destroy() has finished (from inside destroy() or later).
 *  r is invalid after it. NULL does nothing. */
PERFRING_API void perfring_reactor_destroyed(struct perfring_reactor *r);

#ifdef __cplusplus
}
#endif
#endif
