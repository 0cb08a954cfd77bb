# SPDX-License-Identifier: MIT
"""bpf_output= and bpf_ringbuf=: a real BPF program (tests/bpfprog.py) on
sys_enter_getpid writes each call of one process into a map, given as its fd
or as a pin path; every call arrives as a sample, exactly."""
import asyncio
import errno
import os
import struct
import subprocess
import tempfile

import pytest

import perfring
from bpfprog import ARRAY, Program, map_create, pin

N = 3000


def tgid_of(s):
    return struct.unpack_from("<Q", s.raw)[0] >> 32


async def count(child, **kw):
    got = []
    async with perfring.watch(pid=child.pid, flush_ms=10, **kw) as w:
        child.go()
        async for b in w:
            got.extend(b)
    return got, w


@pytest.mark.parametrize("ringbuf", [False, True], ids=["bpf_output", "bpf_ringbuf"])
async def test_map_fd(waiting, no_fd_left, ringbuf):
    child = waiting(N)
    prog = Program(child.pid, ringbuf)
    try:
        key = "bpf_ringbuf" if ringbuf else "bpf_output"
        got, w = await count(child, **{key: prog.map})
    finally:
        prog.close()
    assert len(got) == N
    assert all(s.event == key and tgid_of(s) == child.pid for s in got)
    if ringbuf:
        assert all(s.cpu == -1 and len(s.raw) == 8 for s in got)
    else:   # 8 bytes arrive padded to 12 (round_up(8 + 4, 8) - 4)
        assert all(s.pid == child.pid and len(s.raw) == 12 for s in got)
        assert sum(d["lost"] for d in w.stats()) == 0


@pytest.fixture
def bpffs():
    """A bpffs of the test's own, in a temporary directory, unmounted after."""
    d = tempfile.mkdtemp(prefix="perfring-py-bpffs-")
    r = subprocess.run(["mount", "-t", "bpf", "bpf", d], capture_output=True, text=True)
    if r.returncode:
        os.rmdir(d)
        pytest.fail(f"cannot mount a bpffs: {r.stderr.strip()}")
    yield d
    if os.path.exists(os.path.join(d, "map")):
        os.unlink(os.path.join(d, "map"))
    subprocess.run(["umount", d], check=True)
    os.rmdir(d)


@pytest.mark.parametrize("ringbuf", [False, True], ids=["bpf_output", "bpf_ringbuf"])
async def test_pin_path(waiting, bpffs, ringbuf):
    child = waiting(N)
    prog = Program(child.pid, ringbuf)
    path = os.path.join(bpffs, "map")
    try:
        pin(prog.map, path)
        key = "bpf_ringbuf" if ringbuf else "bpf_output"
        got, _ = await count(child, **{key: path})
    finally:
        prog.close()
    assert len(got) == N and all(tgid_of(s) == child.pid for s in got)


def test_map_errors(bpffs, no_fd_left):
    arr = map_create(ARRAY, 4, 4, 4)
    try:
        for key in ("bpf_output", "bpf_ringbuf"):
            with pytest.raises(perfring.Error) as e:
                perfring.Session(**{key: arr})            # another map type
            assert e.value.errno == errno.EINVAL
            with pytest.raises(perfring.Error) as e:
                perfring.Session(**{key: 0})              # not a BPF map: stdin
            assert e.value.errno == errno.EBADF
            with pytest.raises(perfring.Error) as e:
                perfring.Session(**{key: os.path.join(bpffs, "nothing")})
            assert e.value.errno == errno.ENOENT and "nothing" in str(e.value)
    finally:
        os.close(arr)


async def test_ringbuf_readiness(waiting):
    # No process to end it and a flush a minute away: only the ring buffer's
    # fd, watched on the loop, can deliver the records within the 5 s.
    child = waiting(N)
    prog = Program(child.pid, True)
    got = 0
    try:
        async with perfring.watch(bpf_ringbuf=prog.map, flush_ms=60000) as w:
            child.go()
            async def until_all():
                nonlocal got
                async for b in w:
                    got += len(b)
                    if got >= N:
                        return
            await asyncio.wait_for(until_all(), 5)
    finally:
        prog.close()
    assert got == N
