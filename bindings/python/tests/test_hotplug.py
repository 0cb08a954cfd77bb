# SPDX-License-Identifier: MIT
"""CPU hotplug, simulated: the library's test-only sysfs root
(PERFRING_TEST_SYSFS, docs/HOTPLUG.md), whose online list the test writes
while the real CPU stays online. A watch without cpus reads it again at each
flush: the CPU's ring closes and reopens, and then every getpid of a child
is delivered."""
import asyncio
import os
import time

import pytest

import perfring

GETPID = "syscalls:sys_enter_getpid"
N = 2000
SYS = "/sys/devices/system/cpu"


def cpu_list(text):
    out = []
    for part in text.strip().split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


@pytest.fixture
def fake_sysfs(tmp_path, monkeypatch):
    with open(f"{SYS}/online") as f:
        online = f.read()
    real = cpu_list(online)
    assert len(real) >= 2, "needs two online CPUs (one leaves, one stays)"
    d = tmp_path / "devices/system/cpu"
    d.mkdir(parents=True)
    with open(f"{SYS}/possible") as f:
        (d / "possible").write_text(f.read())
    (d / "online").write_text(online)
    monkeypatch.setenv("PERFRING_TEST_SYSFS", str(tmp_path))

    def set_online(cpus):
        (d / "online").write_text(",".join(map(str, cpus)) + "\n")
    return real, set_online


def nfds():
    return len(os.listdir("/proc/self/fd"))


async def until(cond, what, s=5):
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < s, f"{what}: not within {s} s"
        await asyncio.sleep(0.005)


async def test_watch_follows_a_cpu(fake_sysfs, waiting):
    real, set_online = fake_sysfs
    cpu = real[-1]
    child = waiting(N)
    async with perfring.watch(events=[GETPID], pid=child.pid, flush_ms=10) as w:
        listed = lambda: [d["cpu"] for d in w.stats()]
        assert listed() == real
        on = nfds()
        set_online([c for c in real if c != cpu])
        await until(lambda: cpu not in listed(), f"CPU {cpu} leaving")
        assert nfds() < on
        set_online(real)
        await until(lambda: cpu in listed(), f"CPU {cpu} coming back")
        assert nfds() == on
        child.go()
        n = 0
        async for b in w:
            n += len(b)
    assert n == N


def test_session_follows_a_cpu(fake_sysfs, waiting):
    real, set_online = fake_sysfs
    cpu = real[-1]
    child = waiting(N)
    with perfring.Session(events=[GETPID], pid=child.pid, flush_ms=10) as s:
        listed = lambda: [d["cpu"] for d in s.stats()]
        set_online([c for c in real if c != cpu])
        for _ in s.read(duration=0.1):
            pass
        assert cpu not in listed()
        set_online(real)
        for _ in s.read(duration=0.1):
            pass
        assert listed() == real
        child.go()
        n = sum(len(b) for b in s.read())
    assert n == N


async def test_cpus_given_does_not_follow(fake_sysfs, getpid_n):
    real, set_online = fake_sysfs
    async with perfring.watch(events=[GETPID], cpus=real, flush_ms=10) as w:
        set_online(real[:1])
        await asyncio.sleep(0.1)
        assert [d["cpu"] for d in w.stats()] == real


async def test_watch_notifier(fake_sysfs, monkeypatch, waiting):
    # A flush a minute away: only the notifier (a test socket standing for
    # the uevent socket), watched on the loop, can tell of the change in time.
    import socket
    real, set_online = fake_sysfs
    cpu = real[-1]
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    monkeypatch.setenv("PERFRING_TEST_UEVENT_FD", str(a.fileno()))
    try:
        async with perfring.watch(events=[GETPID], flush_ms=60000) as w:
            listed = lambda: [d["cpu"] for d in w.stats()]
            set_online([c for c in real if c != cpu])
            b.send(f"offline@/devices/system/cpu/cpu{cpu}\0ACTION=offline\0".encode())
            await until(lambda: cpu not in listed(), f"CPU {cpu} leaving")
            set_online(real)
            b.send(f"online@/devices/system/cpu/cpu{cpu}\0ACTION=online\0".encode())
            await until(lambda: cpu in listed(), f"CPU {cpu} coming back")
    finally:
        a.close()
        b.close()
