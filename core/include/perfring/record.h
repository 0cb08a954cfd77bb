/* SPDX-License-Identifier: MIT */
/*
 * What a parse hands over: samples (struct perfring_sample), kernel records
 * (struct perfring_record), their callbacks, and the typed reads of a
 * tracepoint's fields.
 */
#ifndef PERFRING_RECORD_H
#define PERFRING_RECORD_H

#include <linux/perf_event.h>
#include <perfring/common.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
