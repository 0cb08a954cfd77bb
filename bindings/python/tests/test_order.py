# SPDX-License-Identifier: MIT
"""order_window_ms: samples of two CPUs' rings delivered in time order."""
import asyncio

import perfring

GETPID = "syscalls:sys_enter_getpid"
N = 100000   # each child runs long enough (tens of ms) for the two to overlap


async def collect(getpid_n, window_ms):
    # Two writers at once, one per CPU, both children of the watched sh
    # (inherit): each ring's batches overlap in time.
    got = []
    async with perfring.watch(events=[GETPID], pages=2048, flush_ms=10, command=[
            "sh", "-c", f"taskset -c 0 {getpid_n} {N} & taskset -c 1 {getpid_n} {N}; wait"],
            order_window_ms=window_ms) as w:
        async for b in w:
            got.extend(s for s in b if s.pid != w.pid)
        assert w.returncode == 0
        assert sum(d["lost"] for d in w.stats()) == 0
    return got


def backwards(got):
    return sum(1 for a, b in zip(got, got[1:]) if b.time < a.time)


async def test_window_orders_across_cpus(getpid_n):
    got = await collect(getpid_n, 50)
    assert len(got) == 2 * N
    assert {s.cpu for s in got} == {0, 1}
    assert backwards(got) == 0


async def test_without_window_rings_interleave(getpid_n):
    # What the window is for: per-ring batches go back in time between rings.
    got = await collect(getpid_n, 0)
    assert len(got) == 2 * N
    assert backwards(got) > 0


async def test_window_below_the_flush_orders_a_quiet_ring(getpid_n):
    # CPU 0 writes a record every few ms, below the watermark, so only the
    # flush (every 100 ms) would read its ring, while CPU 1 storms: a 10 ms
    # window orders them only if every ring is read before each cut.
    quiet = f"for i in $(seq 60); do taskset -c 0 {getpid_n} 1; sleep 0.005; done"
    storm = f"for i in 1 2 3 4 5 6; do taskset -c 1 {getpid_n} {N}; done"
    got = []
    async with perfring.watch(events=[GETPID], pages=2048, command=[
            "sh", "-c", f"{quiet} & {storm}; wait"], order_window_ms=10) as w:
        async for b in w:
            got.extend(s for s in b if s.pid != w.pid)
        assert w.returncode == 0
    assert {s.cpu for s in got} == {0, 1}
    assert backwards(got) == 0
