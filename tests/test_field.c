/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <perfring/perfring.h>

#include "kernel/tracefs.h"

#define LOC(off, len) ((uint32_t)(off) | (uint32_t)(len) << 16)

/* Payloads start one byte into this buffer, so no multi-byte field of the
 * tests is naturally aligned. */
static _Alignas(8) uint8_t storage[257];
static uint8_t *const raw = storage + 1;

static void put(size_t off, const void *v, size_t n)
{
	cr_assert_leq(off + n, sizeof(storage) - 1);
	memcpy(raw + off, v, n);
}

static void put_u16(size_t off, uint16_t v) { put(off, &v, sizeof(v)); }
static void put_u32(size_t off, uint32_t v) { put(off, &v, sizeof(v)); }
static void put_u64(size_t off, uint64_t v) { put(off, &v, sizeof(v)); }

/* The low `size` bytes of bits as a host-order integer of that size. */
static void put_n(size_t off, uint64_t bits, uint32_t size)
{
	switch (size) {
	case 1: raw[off] = (uint8_t)bits; break;
	case 2: put_u16(off, (uint16_t)bits); break;
	case 4: put_u32(off, (uint32_t)bits); break;
	default: put_u64(off, bits); break;
	}
}

static struct perfring_sample sample(uint32_t size)
{
	return (struct perfring_sample){ .raw = raw, .raw_size = size };
}

static struct perfring_field scalar(uint32_t offset, uint32_t size, int sign)
{
	return (struct perfring_field){
		.name = "x", .type = "t", .offset = offset, .size = size,
		.flags = sign ? PERFRING_FIELD_SIGNED : 0, .elem_size = size,
	};
}

static void fill(void)
{
	memset(storage, 0xee, sizeof(storage));
}

/* ------------------------------------------------------- fixed integers */

Test(field, fixed_width_unsigned, .init = fill)
{
	struct perfring_sample s = sample(32);
	struct perfring_field f8 = scalar(1, 1, 0), f16 = scalar(3, 2, 0);
	struct perfring_field f32 = scalar(5, 4, 0), f64 = scalar(9, 8, 0);
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	raw[1] = 0xa5;
	put_u16(3, 0xbeef);
	put_u32(5, 0xdeadbeef);
	put_u64(9, 0x0123456789abcdefull);
	cr_assert_eq(perfring_field_u8(&f8, &s, &v8), 0);
	cr_expect_eq(v8, 0xa5);
	cr_assert_eq(perfring_field_u16(&f16, &s, &v16), 0);
	cr_expect_eq(v16, 0xbeef);
	cr_assert_eq(perfring_field_u32(&f32, &s, &v32), 0);
	cr_expect_eq(v32, 0xdeadbeef);
	cr_assert_eq(perfring_field_u64(&f64, &s, &v64), 0);
	cr_expect_eq(v64, 0x0123456789abcdefull);
}

Test(field, fixed_width_signed, .init = fill)
{
	struct perfring_sample s = sample(32);
	struct perfring_field f8 = scalar(0, 1, 1), f16 = scalar(1, 2, 1);
	struct perfring_field f32 = scalar(3, 4, 1), f64 = scalar(7, 8, 1);
	int8_t v8;
	int16_t v16;
	int32_t v32;
	int64_t v64;

	raw[0] = (uint8_t)-3;
	put_u16(1, (uint16_t)-300);
	put_u32(3, (uint32_t)-70000);
	put_u64(7, (uint64_t)-5000000000ll);
	cr_assert_eq(perfring_field_s8(&f8, &s, &v8), 0);
	cr_expect_eq(v8, -3);
	cr_assert_eq(perfring_field_s16(&f16, &s, &v16), 0);
	cr_expect_eq(v16, -300);
	cr_assert_eq(perfring_field_s32(&f32, &s, &v32), 0);
	cr_expect_eq(v32, -70000);
	cr_assert_eq(perfring_field_s64(&f64, &s, &v64), 0);
	cr_expect_eq(v64, -5000000000ll);
}

/* Fixed-width accessors read bits: signedness of the field does not matter,
 * only its size. */
Test(field, fixed_width_ignores_signedness, .init = fill)
{
	struct perfring_sample s = sample(8);
	struct perfring_field f = scalar(0, 4, 1);
	uint32_t u;
	int32_t i;

	put_u32(0, 0xffffffffu);
	cr_assert_eq(perfring_field_u32(&f, &s, &u), 0);
	cr_expect_eq(u, 0xffffffffu);
	f.flags = 0;
	cr_assert_eq(perfring_field_s32(&f, &s, &i), 0);
	cr_expect_eq(i, -1);
}

Test(field, wrong_size_is_einval, .init = fill)
{
	struct perfring_sample s = sample(64);
	struct perfring_field f2 = scalar(0, 2, 0), f4 = scalar(0, 4, 1), f3 = scalar(0, 3, 0);
	uint8_t u8 = 7;
	uint16_t u16;
	uint32_t u32 = 7;
	uint64_t u64;
	int8_t s8;
	int16_t s16;
	int32_t s32;
	int64_t s64;

	cr_expect_eq(perfring_field_u32(&f2, &s, &u32), -EINVAL);
	cr_expect_eq(u32, 7, "output written on error");
	cr_expect_eq(perfring_field_u8(&f2, &s, &u8), -EINVAL);
	cr_expect_eq(u8, 7, "output written on error");
	cr_expect_eq(perfring_field_u64(&f4, &s, &u64), -EINVAL);
	cr_expect_eq(perfring_field_u16(&f4, &s, &u16), -EINVAL);
	cr_expect_eq(perfring_field_s8(&f4, &s, &s8), -EINVAL);
	cr_expect_eq(perfring_field_s16(&f4, &s, &s16), -EINVAL);
	cr_expect_eq(perfring_field_s32(&f2, &s, &s32), -EINVAL);
	cr_expect_eq(perfring_field_s64(&f4, &s, &s64), -EINVAL);
	cr_expect_eq(perfring_field_uint(&f3, &s, &u64), -EINVAL);
	cr_expect_eq(perfring_field_int(&f3, &s, &s64), -EINVAL);
}

/* ----------------------------------------------------- widening forms */

Test(field, uint_and_int_widen_by_field_signedness, .init = fill)
{
	static const struct { uint32_t size; uint64_t bits; int sign; int64_t value; } cases[] = {
		{ 1, 0xfe, 1, -2 },
		{ 1, 0xfe, 0, 254 },
		{ 2, 0x8000, 1, -32768 },
		{ 2, 0x8000, 0, 32768 },
		{ 4, 0xfffffff0u, 1, -16 },
		{ 4, 0xfffffff0u, 0, 4294967280ll },
		{ 8, 0x8000000000000000ull, 1, INT64_MIN },
		{ 8, 42, 0, 42 },
	};
	struct perfring_sample s = sample(16);
	struct perfring_field f;
	uint64_t u;
	int64_t i;
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fill();
		put_n(3, cases[k].bits, cases[k].size);
		f = scalar(3, cases[k].size, cases[k].sign);
		cr_assert_eq(perfring_field_int(&f, &s, &i), 0, "case %zu", k);
		cr_expect_eq(i, cases[k].value, "case %zu: int %lld", k, (long long)i);
		cr_assert_eq(perfring_field_uint(&f, &s, &u), 0, "case %zu", k);
		cr_expect_eq(u, (uint64_t)cases[k].value, "case %zu: uint %llu", k,
			     (unsigned long long)u);
	}
}

/* --------------------------------------------------------------- bounds */

Test(field, truncated_payload_is_erange, .init = fill)
{
	struct perfring_field f = scalar(6, 4, 0);
	struct perfring_sample s;
	uint32_t v = 7;
	uint64_t w;

	s = sample(10); /* exactly enough */
	cr_expect_eq(perfring_field_u32(&f, &s, &v), 0);
	s = sample(9);
	v = 7;
	cr_expect_eq(perfring_field_u32(&f, &s, &v), -ERANGE);
	cr_expect_eq(v, 7, "output written on error");
	cr_expect_eq(perfring_field_uint(&f, &s, &w), -ERANGE);
	s = sample(0);
	cr_expect_eq(perfring_field_u32(&f, &s, &v), -ERANGE);
	s = (struct perfring_sample){ .raw = NULL, .raw_size = 100 };
	cr_expect_eq(perfring_field_u32(&f, &s, &v), -ERANGE, "no payload at all");
}

Test(field, offset_size_overflow_is_erange, .init = fill)
{
	struct perfring_sample s = { .raw = raw, .raw_size = UINT32_MAX };
	struct perfring_field f = scalar(UINT32_MAX - 1, 4, 0);
	struct perfring_field g = scalar(UINT32_MAX, 8, 0);
	uint32_t v;
	uint64_t w;

	/* would wrap to 2 and 7 in 32-bit arithmetic, inside the "payload" */
	cr_expect_eq(perfring_field_u32(&f, &s, &v), -ERANGE);
	cr_expect_eq(perfring_field_u64(&g, &s, &w), -ERANGE);
}

Test(field, kind_mismatch_is_einval_before_bounds, .init = fill)
{
	struct perfring_sample s = sample(0); /* bounds would fail too */
	struct perfring_field arr = scalar(0, 4, 0), loc = scalar(0, 4, 0);
	uint32_t v;
	uint64_t w;
	int64_t i;
	const char *str;
	const void *data;
	size_t len;

	arr.flags = PERFRING_FIELD_ARRAY;
	arr.elem_size = 1;
	loc.flags = PERFRING_FIELD_DATA_LOC;
	cr_expect_eq(perfring_field_u32(&arr, &s, &v), -EINVAL);
	cr_expect_eq(perfring_field_uint(&arr, &s, &w), -EINVAL);
	cr_expect_eq(perfring_field_int(&arr, &s, &i), -EINVAL);
	cr_expect_eq(perfring_field_u32(&loc, &s, &v), -EINVAL);
	cr_expect_eq(perfring_field_int(&loc, &s, &i), -EINVAL);
	loc.flags = PERFRING_FIELD_REL_LOC;
	cr_expect_eq(perfring_field_u32(&loc, &s, &v), -EINVAL);
	cr_expect_eq(perfring_field_str(&arr, &s, &str, &len), -EINVAL, "u8[4] is not a string");
	arr = scalar(0, 4, 0);
	cr_expect_eq(perfring_field_str(&arr, &s, &str, &len), -EINVAL);
	cr_expect_eq(perfring_field_array(&arr, &s, &data, &len), -EINVAL);
}

Test(field, null_arguments, .init = fill)
{
	struct perfring_sample s = sample(8);
	struct perfring_field f = scalar(0, 4, 0);
	uint32_t v;
	int64_t i;
	const char *str;
	const void *data;
	size_t len;

	cr_expect_eq(perfring_field_u32(NULL, &s, &v), -EINVAL);
	cr_expect_eq(perfring_field_u32(&f, NULL, &v), -EINVAL);
	cr_expect_eq(perfring_field_u32(&f, &s, NULL), -EINVAL);
	cr_expect_eq(perfring_field_int(&f, &s, NULL), -EINVAL);
	cr_expect_eq(perfring_field_uint(NULL, &s, NULL), -EINVAL);
	cr_expect_eq(perfring_field_int(NULL, &s, &i), -EINVAL);
	f.flags = PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING;
	cr_expect_eq(perfring_field_str(&f, &s, NULL, &len), -EINVAL);
	cr_expect_eq(perfring_field_str(&f, &s, &str, NULL), -EINVAL);
	cr_expect_eq(perfring_field_array(&f, &s, NULL, &len), -EINVAL);
	cr_expect_eq(perfring_field_array(&f, &s, &data, NULL), -EINVAL);
}

/* -------------------------------------------------------------- strings */

static struct perfring_field char_array(uint32_t offset, uint32_t size)
{
	return (struct perfring_field){
		.name = "comm", .type = "char[]", .offset = offset, .size = size,
		.flags = PERFRING_FIELD_ARRAY | PERFRING_FIELD_STRING, .elem_size = 1,
	};
}

static struct perfring_field locator(uint32_t offset, uint32_t kind, uint32_t extra)
{
	return (struct perfring_field){
		.name = "s", .type = "__data_loc char[]", .offset = offset, .size = 4,
		.flags = kind | extra, .elem_size = 1,
	};
}

Test(field, fixed_char_array, .init = fill)
{
	struct perfring_sample s = sample(40);
	struct perfring_field f = char_array(5, 16);
	const char *str;
	size_t len;

	put(5, "bash\0garbage", 12);
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(str, (const char *)raw + 5, "must point into the payload");
	cr_expect_eq(len, 4);
	cr_expect_eq(memcmp(str, "bash", 4), 0);
	/* no NUL inside the field: the whole field, not a byte beyond */
	put(5, "0123456789abcdef", 16);
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 16);
	/* an empty string */
	raw[5] = '\0';
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 0);
	/* field end past the payload */
	s = sample(20);
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
}

Test(field, data_loc_string, .init = fill)
{
	struct perfring_sample s = sample(40);
	struct perfring_field f = locator(3, PERFRING_FIELD_DATA_LOC, PERFRING_FIELD_STRING);
	const char *str;
	size_t len;

	put_u32(3, LOC(20, 10));
	put(20, "/bin/true\0", 10);
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(str, (const char *)raw + 20);
	cr_expect_eq(len, 9);
	cr_expect_eq(memcmp(str, "/bin/true", 9), 0);
	/* the data runs to the payload's very end, without a NUL */
	put_u32(3, LOC(30, 10));
	put(30, "abcdefghij", 10);
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 10);
	/* one byte too far */
	put_u32(3, LOC(31, 10));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
	/* empty */
	put_u32(3, LOC(40, 0));
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 0);
	/* a locator whose offset is far outside */
	put_u32(3, LOC(0xffff, 0xffff));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
}

Test(field, locator_itself_out_of_bounds, .init = fill)
{
	struct perfring_field f = locator(8, PERFRING_FIELD_DATA_LOC, PERFRING_FIELD_STRING);
	struct perfring_sample s = sample(11); /* locator needs 8..11 */
	const char *str;
	const void *data;
	size_t len;

	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
	cr_expect_eq(perfring_field_array(&f, &s, &data, &len), -ERANGE);
	f.offset = UINT32_MAX - 1;
	s.raw_size = UINT32_MAX;
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
}

Test(field, locator_must_be_four_bytes, .init = fill)
{
	struct perfring_field f = locator(0, PERFRING_FIELD_DATA_LOC, PERFRING_FIELD_STRING);
	struct perfring_sample s = sample(64);
	const char *str;
	size_t len;

	f.size = 8;
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -EINVAL);
}

Test(field, rel_loc_is_relative_to_locator_end, .init = fill)
{
	struct perfring_sample s = sample(48);
	struct perfring_field f = locator(8, PERFRING_FIELD_REL_LOC, PERFRING_FIELD_STRING);
	const char *str;
	size_t len;

	/* data at 8 + 4 + 20 = 32 */
	put_u32(8, LOC(20, 6));
	put(32, "hello\0", 6);
	put(20, "WRONG\0", 6); /* where a __data_loc reading would land */
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(str, (const char *)raw + 32);
	cr_expect_eq(len, 5);
	cr_expect_eq(memcmp(str, "hello", 5), 0);
	/* ends exactly at the payload end: 12 + 36 = 48 */
	put_u32(8, LOC(0, 36));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), 0);
	put_u32(8, LOC(1, 36));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
}

/* A locator near the end of a 4 GiB payload: its target offset only fits in
 * wider than 32-bit arithmetic. The mapping is reserved, never touched but
 * for its last page. */
Test(field, rel_loc_offset_cannot_wrap)
{
	size_t map_len = (size_t)UINT32_MAX + 1;
	uint8_t *big = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct perfring_sample s = { .raw = big, .raw_size = UINT32_MAX };
	struct perfring_field f = locator(UINT32_MAX - 4, PERFRING_FIELD_REL_LOC,
					  PERFRING_FIELD_STRING);
	uint32_t loc = LOC(0xffff, 0xffff);
	const char *str;
	size_t len;

	if (big == MAP_FAILED)
		cr_skip_test("cannot reserve 4 GiB of address space");
	memcpy(big + f.offset, &loc, sizeof(loc));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), -ERANGE);
	/* the same locator a little earlier does fit */
	f.offset = UINT32_MAX - 4 - 0xffff - 0xffff;
	memcpy(big + f.offset, &loc, sizeof(loc));
	cr_expect_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(str, (const char *)big + f.offset + 4 + 0xffff);
	munmap(big, map_len);
}

/* --------------------------------------------------------------- arrays */

Test(field, fixed_array, .init = fill)
{
	static const uint32_t vals[4] = { 1, 2, 3, 0xffffffffu };
	struct perfring_field f = {
		.name = "v", .type = "u32[4]", .offset = 5, .size = 16,
		.flags = PERFRING_FIELD_ARRAY, .elem_size = 4,
	};
	struct perfring_sample s = sample(21);
	const void *data;
	size_t bytes;
	uint32_t got[4];

	put(5, vals, sizeof(vals));
	cr_assert_eq(perfring_field_array(&f, &s, &data, &bytes), 0);
	cr_expect_eq(data, raw + 5);
	cr_assert_eq(bytes, 16);
	memcpy(got, data, bytes);
	cr_expect_arr_eq(got, vals, sizeof(vals));
	s = sample(20);
	cr_expect_eq(perfring_field_array(&f, &s, &data, &bytes), -ERANGE);
}

Test(field, data_loc_array, .init = fill)
{
	static const uint64_t vals[3] = { 10, 20, 30 };
	struct perfring_field f = locator(2, PERFRING_FIELD_DATA_LOC, 0);
	struct perfring_sample s = sample(64);
	const void *data;
	size_t bytes;
	const char *str;

	f.elem_size = 8;
	put_u32(2, LOC(9, sizeof(vals)));
	put(9, vals, sizeof(vals));
	cr_assert_eq(perfring_field_array(&f, &s, &data, &bytes), 0);
	cr_expect_eq(data, raw + 9);
	cr_expect_eq(bytes, sizeof(vals));
	cr_expect_eq(memcmp(data, vals, sizeof(vals)), 0);
	cr_expect_eq(perfring_field_str(&f, &s, &str, &bytes), -EINVAL, "u64[] is no string");
	s = sample(32);
	cr_expect_eq(perfring_field_array(&f, &s, &data, &bytes), -ERANGE);
}

Test(field, strings_are_arrays_too, .init = fill)
{
	struct perfring_field f = char_array(0, 8);
	struct perfring_sample s = sample(8);
	const void *data;
	size_t bytes;

	put(0, "ab\0cdefg", 8);
	cr_assert_eq(perfring_field_array(&f, &s, &data, &bytes), 0);
	cr_expect_eq(bytes, 8, "array gives all bytes, NULs included");
}

/* "char buf[]" of size 0: the rest of the payload. */
Test(field, flexible_array_runs_to_payload_end, .init = fill)
{
	struct perfring_field f = char_array(16, 0);
	struct perfring_sample s = sample(24);
	const char *str;
	const void *data;
	size_t len;

	put(16, "hi there", 8);
	cr_assert_eq(perfring_field_array(&f, &s, &data, &len), 0);
	cr_expect_eq(len, 8);
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 8);
	raw[18] = '\0';
	cr_assert_eq(perfring_field_str(&f, &s, &str, &len), 0);
	cr_expect_eq(len, 2);
	s = sample(16);
	cr_assert_eq(perfring_field_array(&f, &s, &data, &len), 0);
	cr_expect_eq(len, 0);
	s = sample(15);
	cr_expect_eq(perfring_field_array(&f, &s, &data, &len), -ERANGE);
}

/* -------------------------------------- end to end: parsed format fields */

static const char exec_format[] =
	"name: sched_process_exec\n"
	"ID: 365\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:20;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid\n";

Test(field, parsed_format_end_to_end, .init = fill)
{
	struct pr_tp_format fmt;
	struct perfring_sample s = sample(48);
	const char *str;
	size_t len;
	int64_t pid;
	uint64_t type;
	uint16_t type16;

	cr_assert_eq(pr_format_parse(exec_format, sizeof(exec_format) - 1, &fmt, NULL, 0), 0);
	put_u16(0, 365);
	put_u32(4, (uint32_t)-1);
	put_u32(8, LOC(36, 12));
	put_u32(12, 4321);
	put(20, "true\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	put(36, "/usr/bin/tru", 12);
	cr_assert_eq(perfring_field_uint(pr_format_field(&fmt, "common_type"), &s, &type), 0);
	cr_expect_eq(type, 365);
	cr_assert_eq(perfring_field_u16(pr_format_field(&fmt, "common_type"), &s, &type16), 0);
	cr_expect_eq(type16, 365);
	cr_assert_eq(perfring_field_int(pr_format_field(&fmt, "common_pid"), &s, &pid), 0);
	cr_expect_eq(pid, -1);
	cr_assert_eq(perfring_field_int(pr_format_field(&fmt, "pid"), &s, &pid), 0);
	cr_expect_eq(pid, 4321);
	cr_assert_eq(perfring_field_str(pr_format_field(&fmt, "filename"), &s, &str, &len), 0);
	cr_expect_eq(len, 12);
	cr_expect_eq(memcmp(str, "/usr/bin/tru", 12), 0);
	cr_assert_eq(perfring_field_str(pr_format_field(&fmt, "comm"), &s, &str, &len), 0);
	cr_expect_eq(len, 4);
	cr_expect_eq(perfring_field_int(pr_format_field(&fmt, "filename"), &s, &pid), -EINVAL);
	cr_expect_eq(perfring_field_str(pr_format_field(&fmt, "pid"), &s, &str, &len), -EINVAL);
	s = sample(47); /* the string's last byte is cut off */
	cr_expect_eq(perfring_field_str(pr_format_field(&fmt, "filename"), &s, &str, &len),
		     -ERANGE);
	cr_expect_eq(perfring_field_int(pr_format_field(&fmt, "pid"), &s, &pid), 0);
	pr_format_free(&fmt);
}

Test(field, parsed_rel_loc_end_to_end, .init = fill)
{
	static const char text[] =
		"ID: 1\n"
		"\tfield:__rel_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc u32[] vals;\toffset:12;\tsize:4;\tsigned:0;\n";
	static const uint32_t vals[2] = { 7, 9 };
	struct pr_tp_format fmt;
	struct perfring_sample s = sample(40);
	const char *str;
	const void *data;
	size_t len;

	cr_assert_eq(pr_format_parse(text, sizeof(text) - 1, &fmt, NULL, 0), 0);
	put_u32(8, LOC(4, 4));          /* 12 + 4 = 16 */
	put(16, "ok!\0", 4);
	put_u32(12, LOC(8, 8));         /* 16 + 8 = 24 */
	put(24, vals, sizeof(vals));
	cr_assert_eq(perfring_field_str(pr_format_field(&fmt, "msg"), &s, &str, &len), 0);
	cr_expect_eq(len, 3);
	cr_expect_eq(memcmp(str, "ok!", 3), 0);
	cr_assert_eq(perfring_field_array(pr_format_field(&fmt, "vals"), &s, &data, &len), 0);
	cr_expect_eq(data, raw + 24);
	cr_expect_eq(len, sizeof(vals));
	pr_format_free(&fmt);
}
