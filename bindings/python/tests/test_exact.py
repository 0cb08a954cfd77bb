# SPDX-License-Identifier: MIT
"""Exact counts: a child's getpid calls (tests/getpid_n makes exactly N)
through Session and watch, with command= (every call from its exec on) and
with pid=; the loop's other tasks run while records flow. Each ring is large
enough for the whole stream (a record is 64 bytes), so that a busy machine
cannot make the kernel drop any: a drop would show in stats' lost first."""
import asyncio
import time

import perfring

GETPID = "syscalls:sys_enter_getpid"


def lost(w):
    return sum(d["lost"] for d in w.stats())


def only(batches, pid):
    return [s for b in batches for s in b if s.pid == pid]


def test_session_command_exact(getpid_n, no_fd_left):
    with perfring.Session(events=[GETPID], command=[getpid_n, "5000", "7"], pages=512) as s:
        batches = list(s.read())
        child = s.pid
        assert s.returncode == 7
        st = s.stats()
    got = [x for b in batches for x in b]
    assert sum(d["lost"] for d in st) == 0
    assert len(got) == 5000
    assert all(x.pid == child and x.tid == child and x.event == GETPID for x in got)
    assert sum(d["samples"] for d in st) == 5000


def test_session_duration_ends(getpid_n, no_fd_left):
    # No process to end it: read(duration) returns after about that long.
    with perfring.Session(events=[GETPID], flush_ms=10) as s:
        t0 = time.monotonic()
        for _ in s.read(duration=0.2):
            pass
        assert 0.2 <= time.monotonic() - t0 < 5


async def test_watch_command_exact(getpid_n, no_fd_left):
    n = 0
    async with perfring.watch(events=[GETPID], command=[getpid_n, "20000", "3"],
                              pages=512) as w:
        async for batch in w:
            assert all(s.pid == w.pid for s in batch)
            n += len(batch)
        assert w.returncode == 3
    assert lost(w) == 0
    assert n == 20000


async def test_watch_pid_exact(waiting, no_fd_left):
    child = waiting(30000)
    n = 0
    async with perfring.watch(events=[GETPID], pid=child.pid, watermark=8192,
                              pages=1024) as w:
        child.go()
        async for batch in w:    # ends after the process's exit and last record
            n += len(only([batch], child.pid))
        assert w.returncode is None   # not our child to reap: Popen's
    assert lost(w) == 0
    assert n == 30000
    assert child.proc.wait() == 0


async def test_watch_below_watermark_flushes(getpid_n):
    # 10 records are far below a 64 KiB watermark: while the watched process
    # lives on (sh, then sleep in its place), only the flush timer delivers
    # them. Its child getpid_n's calls come through inherit.
    seen = 0
    async with perfring.watch(events=[GETPID], watermark=65536, flush_ms=20, command=[
            "sh", "-c", f"{getpid_n} 10 && exec sleep 10"]) as w:
        async def ten():
            nonlocal seen
            async for batch in w:
                seen += sum(1 for s in batch if s.pid != w.pid)
                if seen >= 10:
                    return
        await asyncio.wait_for(ten(), 5)
        assert w.returncode is None    # still sleeping: the timer it was
    assert seen == 10
    assert w.returncode == -9          # closed early: killed and reaped


async def test_ticker_runs_while_records_flow(getpid_n):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    t = asyncio.create_task(ticker())
    n, during = 0, []
    # The whole stream is in the rings before the first batch is read, so the
    # rings are ready all along: only the watch's own turns let the ticker in.
    async with perfring.watch(events=[GETPID], command=[getpid_n, "100000"],
                              pages=2048) as w:
        while w.returncode is None:
            await asyncio.sleep(0.01)
        async for batch in w:
            n += len(batch)
            during.append(ticks)
            time.sleep(0.0005)     # a consumer that takes its time
    t.cancel()
    assert lost(w) == 0
    assert n == 100000
    assert len(during) >= 20
    assert during[-1] - during[0] >= len(during) // 4, (during[0], during[-1], len(during))


async def test_readiness_delivers(waiting):
    # A flush a minute away: within the 5 s only the rings' fds, watched on
    # the loop, deliver; all but what stays below the 4 KiB watermark (64
    # records of 64 bytes per ring) must have come.
    child = waiting(20000)
    got = 0
    async with perfring.watch(events=[GETPID], flush_ms=60000, watermark=4096,
                              pages=1024) as w:
        child.go()
        try:
            async def until_most():
                nonlocal got
                async for b in w:
                    got += len(only([b], child.pid))
                    if got >= 20000 - 64 * len(w.stats()):
                        return
            await asyncio.wait_for(until_most(), 5)
        except asyncio.TimeoutError:
            pass
        assert lost(w) == 0
    assert got >= 20000 - 64 * len(w.stats()), got


async def test_losses_add_up(getpid_n):
    # A one-page ring nobody reads while the child runs: the kernel drops
    # most records, and after the exit samples + lost are exactly the calls,
    # also those dropped while the ring was full to its end (R4).
    n = 20000
    async with perfring.watch(events=[GETPID], command=[getpid_n, str(n)], pages=1,
                              watermark=2048) as w:
        while w.returncode is None:
            await asyncio.sleep(0.01)
        got = sum([len(b) async for b in w])
    assert lost(w) > 0
    assert got + lost(w) == n, (got, lost(w))
