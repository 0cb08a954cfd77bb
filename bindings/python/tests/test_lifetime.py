# SPDX-License-Identifier: MIT
"""Lifetimes: closing twice, exceptions in the consumer, a watch collected
unclosed, a closed watch or session used again; no fd, reader or child is
left behind."""
import asyncio
import gc
import os
import signal

import pytest

import perfring

GETPID = "syscalls:sys_enter_getpid"


def readers(loop):
    return set(loop._selector.get_map())


async def test_close_twice(getpid_n, no_fd_left):
    w = perfring.watch(events=[GETPID], command=[getpid_n, "10"])
    async with w:
        async for _ in w:
            pass
        w.close()
        w.close()
    await w.aclose()
    with pytest.raises(StopAsyncIteration):
        await w.__anext__()
    with pytest.raises(ValueError):
        async with w:
            pass
    s = perfring.Session(events=[GETPID], command=[getpid_n, "10"])
    s.close()
    s.close()
    with pytest.raises(ValueError):
        next(s.read())


async def test_exception_in_consumer(getpid_n, no_fd_left):
    loop = asyncio.get_running_loop()
    before = readers(loop)
    with pytest.raises(RuntimeError, match="consumer"):
        async with perfring.watch(events=[GETPID],
                                  command=[getpid_n, "100000000"]) as w:
            async for _ in w:
                raise RuntimeError("consumer failed")
    # The child, still running, was killed and reaped.
    assert w.returncode == -signal.SIGKILL
    assert readers(loop) == before
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_exception_in_sync_consumer(getpid_n, no_fd_left):
    with pytest.raises(RuntimeError):
        with perfring.Session(events=[GETPID], command=[getpid_n, "100000000"]) as s:
            for _ in s.read():
                raise RuntimeError("consumer failed")
    assert s.returncode == -signal.SIGKILL


async def test_unclosed_watch_is_collected(getpid_n, no_fd_left):
    loop = asyncio.get_running_loop()
    before = readers(loop)

    async def forget():
        w = perfring.watch(events=[GETPID], command=[getpid_n, "100000000"])
        await w.__aenter__()
        batch = await w.__anext__()
        assert batch and readers(loop) != before
        return w.pid

    pid = await forget()
    gc.collect()
    assert readers(loop) == before
    with pytest.raises(ChildProcessError):   # killed and reaped by the finalizer
        os.waitpid(pid, os.WNOHANG)


async def test_close_from_another_task_ends_iteration(no_fd_left):
    # No process: the iteration only ends when the watch is closed.
    w = perfring.watch(events=["sched:sched_process_exec"], flush_ms=10)
    async with w:
        async def consume():
            async for _ in w:
                pass
        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        w.close()
        await asyncio.wait_for(task, 5)


async def test_many_watches_leave_nothing(getpid_n, no_fd_left):
    for _ in range(20):
        async with perfring.watch(events=[GETPID], command=[getpid_n, "100"]) as w:
            n = sum([len(b) async for b in w])
        assert n == 100 and w.returncode == 0


async def test_stats_per_cpu(getpid_n):
    async with perfring.watch(events=[GETPID], command=[getpid_n, "1000"], cpus=[0, 1]) as w:
        async for _ in w:
            pass
        st = w.stats()
    assert [d["cpu"] for d in st] == [0, 1]
    assert sum(d["samples"] for d in st) == 1000
    assert all(d["lost"] == 0 for d in st)
    assert w.stats() == st      # kept after close


async def test_callback_error_reaches_consumer(getpid_n, no_fd_left):
    # The exit callback fails (its reap is sabotaged): the error is raised in
    # the consumer's iteration, not lost in the loop's exception handler.
    async with perfring.watch(events=[GETPID], command=[getpid_n, "10"]) as w:
        def broken(flags):
            raise RuntimeError("reap failed")
        w._reader._reap = broken
        with pytest.raises(RuntimeError, match="reap failed"):
            async for _ in w:
                pass
        del w._reader._reap            # close() reaps the child for real
    assert w.returncode == 0
