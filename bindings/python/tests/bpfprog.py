# SPDX-License-Identifier: MIT
"""A real BPF program for the tests, as raw instructions through ctypes (no
clang, no libbpf): on syscalls:sys_enter_getpid, for one tgid only, it
writes the 8-byte bpf_get_current_pid_tgid() value into a map, with
bpf_perf_event_output (a PERF_EVENT_ARRAY) or bpf_ringbuf_output (a
RINGBUF). Everything it makes is closed by close()."""
import ctypes
import os
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_BPF, SYS_PERF_EVENT_OPEN = 321, 298
BPF_MAP_CREATE, BPF_PROG_LOAD, BPF_OBJ_PIN = 0, 5, 6
PERF_EVENT_ARRAY, ARRAY, RINGBUF = 4, 2, 27
PROG_TRACEPOINT = 5
SET_BPF, ENABLE = 0x40042408, 0x2400


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = _libc.syscall(SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf({cmd}): {os.strerror(e)}")
    return r


def map_create(kind, key, value, entries):
    return bpf(BPF_MAP_CREATE, struct.pack("<IIIII", kind, key, value, entries, 0))


def pin(fd, path):
    p = ctypes.create_string_buffer(path.encode())
    bpf(BPF_OBJ_PIN, struct.pack("<QI", ctypes.addressof(p), fd))


def _insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, dst | (src << 4), off, imm)


def _program(map_fd, tgid, ringbuf):
    def ld_map(dst):   # dst = the map (BPF_PSEUDO_MAP_FD), 2 slots
        return _insn(0x18, dst, 1, 0, map_fd) + _insn(0, 0, 0, 0, 0)
    if ringbuf:
        out = [ld_map(1), _insn(0xbf, 2, 10), _insn(0x07, 2, imm=-8),
               _insn(0xb7, 3, imm=8), _insn(0xb7, 4, imm=0), _insn(0x85, imm=130)]
    else:   # r1 ctx, r2 map, r3 BPF_F_CURRENT_CPU (mov32: zero-extended), r4 data, r5 size
        out = [_insn(0xbf, 1, 6), ld_map(2), _insn(0xb4, 3, imm=-1), _insn(0xbf, 4, 10),
               _insn(0x07, 4, imm=-8), _insn(0xb7, 5, imm=8), _insn(0x85, imm=25)]
    slots = sum(len(i) // 8 for i in out)
    head = [_insn(0xbf, 6, 1),                 # r6 = ctx
            _insn(0x85, imm=14),               # r0 = bpf_get_current_pid_tgid()
            _insn(0xbf, 1, 0), _insn(0x77, 1, imm=32),
            _insn(0x55, 1, off=1 + slots, imm=tgid),   # not ours: to the exit
            _insn(0x7b, 10, 0, -8)]            # *(u64 *)(fp - 8) = r0
    tail = [_insn(0xb7, 0, imm=0), _insn(0x95)]
    return b"".join(head + out + tail)


def _tracepoint_id():
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(f"{root}/events/syscalls/sys_enter_getpid/id") as f:
                return int(f.read())
        except OSError:
            pass
    raise OSError("no tracefs with syscalls:sys_enter_getpid")


class Program:
    def __init__(self, tgid, ringbuf):
        self.fds = []
        try:
            if ringbuf:
                self.map = map_create(RINGBUF, 0, 0, 1 << 20)
            else:
                self.map = map_create(PERF_EVENT_ARRAY, 4, 4, os.cpu_count())
            self.fds.append(self.map)
            code = _program(self.map, tgid, ringbuf)
            lic = ctypes.create_string_buffer(b"GPL")
            log = ctypes.create_string_buffer(65536)
            insns = ctypes.create_string_buffer(code, len(code))
            try:
                prog = bpf(BPF_PROG_LOAD, struct.pack(
                    "<IIQQIIQ", PROG_TRACEPOINT, len(code) // 8, ctypes.addressof(insns),
                    ctypes.addressof(lic), 1, len(log), ctypes.addressof(log)))
            except OSError as e:
                raise OSError(e.errno, f"BPF_PROG_LOAD: {log.value.decode()}") from None
            self.fds.append(prog)
            # type TRACEPOINT, size, config, sample_period 1, sample_type,
            # read_format, flags: disabled
            attr = struct.pack("<IIQQQQQ", 2, 128, _tracepoint_id(), 1, 0, 0, 1)
            attr = ctypes.create_string_buffer(attr, 128)
            tp = _libc.syscall(SYS_PERF_EVENT_OPEN, attr, -1, 0, -1, 8)  # FD_CLOEXEC
            if tp < 0:
                raise OSError(ctypes.get_errno(), "perf_event_open(sys_enter_getpid)")
            self.fds.append(tp)
            if _libc.ioctl(tp, SET_BPF, prog) < 0 or _libc.ioctl(tp, ENABLE, 0) < 0:
                raise OSError(ctypes.get_errno(), "attaching the program")
        except BaseException:
            self.close()
            raise

    def close(self):
        for fd in reversed(self.fds):
            os.close(fd)
        self.fds = []
