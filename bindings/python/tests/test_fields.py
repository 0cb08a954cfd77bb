# SPDX-License-Identifier: MIT
"""A sample's fields: the header (event, cpu, pid, tid, time), the payload
(raw) and a tracepoint's fields decoded from it (s["name"], s.fields);
filters; software events."""
import os

import pytest

import perfring

EXEC = "sched:sched_process_exec"
SWITCH = "sched:sched_switch"


async def test_exec_fields(getpid_n, no_fd_left):
    async with perfring.watch(events=[EXEC], command=[getpid_n, "1"]) as w:
        got = []
        async for b in w:
            got.extend(b)
        child = w.pid
    assert len(got) == 1
    s = got[0]
    assert s.event == EXEC
    assert (s.pid, s.tid) == (child, child)
    assert s["filename"] == getpid_n
    assert s["pid"] == child and s["old_pid"] == child
    assert s.fields == {"filename": getpid_n, "pid": child, "old_pid": child}
    assert isinstance(s.time, int) and s.time > 0
    assert s.cpu in range(os.cpu_count())
    assert isinstance(s.raw, bytes) and len(s.raw) >= 20
    # The payload's filename is a __data_loc string: locator at offset 8.
    loc = int.from_bytes(s.raw[8:12], "little")
    off, size = loc & 0xFFFF, loc >> 16
    assert s.raw[off:off + size].rstrip(b"\0").decode() == getpid_n
    assert "sched:sched_process_exec" in repr(s)


async def test_switch_fields_and_filter():
    # sleep(1) switches out as it sleeps (its exit's switch comes after its
    # events are gone).
    async def run(filters):
        out = []
        async with perfring.watch(events=[SWITCH], command=["sleep", "0.05"],
                                  filters=filters) as w:
            async for b in w:
                out.extend(b)
            return out, w.pid

    got, child = await run(None)
    assert got, "the child never switched out"
    for s in got:
        assert s["prev_pid"] == child
        assert s["prev_comm"] == "sleep"
        assert isinstance(s["prev_state"], int) and isinstance(s["next_comm"], str)
        assert set(s.fields) == {"prev_comm", "prev_pid", "prev_prio", "prev_state",
                                 "next_comm", "next_pid", "next_prio"}
    filtered, _ = await run({SWITCH: "prev_pid == 1"})
    assert filtered == []


def test_sample_misuse(getpid_n):
    with perfring.Session(events=[EXEC], command=[getpid_n, "1"]) as s:
        got = [x for b in s.read() for x in b]
    assert len(got) == 1
    with pytest.raises(TypeError):
        got[0][1]
    with pytest.raises(KeyError):
        got[0]["no_such_field"]
    with pytest.raises(KeyError):
        got[0]["common_pid"]       # common fields are left out


def test_software_event(getpid_n):
    with perfring.Session(software=["page-faults"], command=[getpid_n, "1"]) as s:
        got = [x for b in s.read() for x in b]
        child = s.pid
    assert got, "an exec makes page faults"
    assert all(x.event == "page-faults" and x.pid == child for x in got)
    assert got[0].raw == b"" and got[0].fields == {}
