# SPDX-License-Identifier: MIT
"""libperfring for Python: Linux perf_event rings read on asyncio.

    async with perfring.watch(events=["sched:sched_switch"]) as w:
        async for batch in w:        # a list of Sample per wakeup
            for s in batch:
                s.event, s.cpu, s.pid, s.tid, s.time, s.raw, s["next_comm"], s.fields

    with perfring.Session(events=["syscalls:sys_enter_getpid"]) as s:
        for batch in s.read(duration=1.0):
            ...
"""
from ._perfring import Error, Sample, Event, version
from ._aio import watch, Watch
from ._sync import Session

__all__ = ["watch", "Watch", "Session", "Error", "Sample", "Event", "version"]
