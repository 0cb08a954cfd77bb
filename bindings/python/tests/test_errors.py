# SPDX-License-Identifier: MIT
"""Errors: the library's refusals raise perfring.Error (an OSError with its
errno and sentence); wrong option types TypeError; bad values ValueError
(or perfring.Error EINVAL where only the kernel can tell). None leaves an
fd or a child behind."""
import errno
import os

import pytest

import perfring
from perfring import _perfring

GETPID = "syscalls:sys_enter_getpid"


def test_error_is_oserror():
    assert issubclass(perfring.Error, OSError)


def test_unknown_tracepoint(no_fd_left):
    with pytest.raises(perfring.Error) as e:
        perfring.Session(events=["nosuchsys:nosuchevent"])
    assert e.value.errno == errno.ENOENT
    assert "nosuchsys" in str(e.value) and "nosuchevent" in str(e.value)
    assert e.value.strerror and e.value.strerror != os.strerror(errno.ENOENT)


async def test_unknown_tracepoint_watch(no_fd_left):
    with pytest.raises(perfring.Error) as e:
        async with perfring.watch(events=["sched:no_such_event"]):
            pass
    assert e.value.errno == errno.ENOENT and "no_such_event" in str(e.value)


@pytest.mark.parametrize("kw", [
    dict(events="syscalls:sys_enter_getpid"),
    dict(events=[1]),
    dict(events=[GETPID], software="page-faults"),
    dict(events=[GETPID], pid="1"),
    dict(events=[GETPID], pid=True),
    dict(events=[GETPID], cpus=0),
    dict(events=[GETPID], cpus=[0.5]),
    dict(events=[GETPID], cpus=[True]),
    dict(events=[GETPID], watermark=1.5),
    dict(events=[GETPID], pages="64"),
    dict(events=[GETPID], flush_ms="100"),
    dict(events=[GETPID], filters=[GETPID]),
    dict(events=[GETPID], filters={GETPID: 1}),
    dict(events=[GETPID], command="ls"),
    dict(events=[GETPID], command=["ls", 1]),
    dict(bpf_output=1.5),
    dict(bpf_ringbuf=[b"/sys/fs/bpf/x"]),
])
def test_wrong_types(kw, no_fd_left):
    with pytest.raises(TypeError):
        perfring.Session(**kw)


@pytest.mark.parametrize("kw", [
    dict(),
    dict(events=[]),
    dict(events=[""]),
    dict(events=["a\0b:c"]),
    dict(events=["sys:"]),
    dict(events=[":name"]),
    dict(events=["no-such-software"]),
    dict(software=["sched:sched_switch"]),
    dict(events=[GETPID], pid=-1),
    dict(events=[GETPID], pid=0),
    dict(events=[GETPID], cpus=[]),
    dict(events=[GETPID], cpus=[-1]),
    dict(events=[GETPID], pages=3),
    dict(events=[GETPID], pages=0),
    dict(events=[GETPID], pages=1, watermark=4096),
    dict(events=[GETPID], watermark=-1),
    dict(events=[GETPID], flush_ms=0),
    dict(events=[GETPID], flush_ms=float("nan")),
    dict(events=[GETPID], order_window_ms=-1),
    dict(events=[GETPID], filters={"sched:sched_switch": "prev_pid == 1"}),
    dict(events=[GETPID], filters={GETPID: "a\0b"}),
    dict(events=[GETPID], command=[]),
    dict(events=[GETPID], command=[""]),
    dict(events=[GETPID], command=["ls"], pid=1),
    dict(bpf_output=-1),
    dict(bpf_output=""),
    dict(bpf_ringbuf="/sys/fs/bpf/a\0b"),
])
def test_bad_values(kw, no_fd_left):
    with pytest.raises(ValueError):
        perfring.Session(**kw)


def test_kernel_refuses_filter(no_fd_left):
    with pytest.raises(perfring.Error) as e:
        perfring.Session(events=[GETPID], filters={GETPID: "this is == not a filter ("})
    assert e.value.errno == errno.EINVAL
    assert "this is == not a filter (" in str(e.value)


def test_offline_cpu(no_fd_left):
    with pytest.raises(perfring.Error) as e:
        perfring.Session(events=[GETPID], cpus=[4000])
    assert e.value.errno in (errno.ENODEV, errno.EINVAL)


def test_missing_command(no_fd_left):
    with pytest.raises(perfring.Error) as e:
        perfring.Session(events=[GETPID], command=["/nonexistent/program", "x"])
    assert e.value.errno == errno.ENOENT
    assert "/nonexistent/program" in str(e.value)
    with pytest.raises(ChildProcessError):    # the child was reaped
        os.waitpid(-1, os.WNOHANG)


def test_command_with_failing_session_leaves_no_child(getpid_n, no_fd_left):
    with pytest.raises(perfring.Error):
        perfring.Session(events=["nosuch:event"], command=[getpid_n, "1"])
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_gone_pid(no_fd_left):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    with pytest.raises(perfring.Error) as e:
        perfring.Session(events=[GETPID], pid=pid)
    assert e.value.errno == errno.ESRCH


def test_core_misuse(no_fd_left):
    # The C type checks for itself, whatever the Python layer passed.
    with pytest.raises(TypeError):
        _perfring.Core(events=5)
    with pytest.raises(TypeError):
        _perfring.Core(events=[GETPID], cpus=["0"])
    with pytest.raises(TypeError):
        _perfring.Core("positional")
    with pytest.raises(ValueError):
        _perfring.Core(events=[GETPID], pid=-5)
    with pytest.raises(ValueError):
        _perfring.Core(events=[GETPID], filters={GETPID: "common_pid == 1\0 junk"})
    with pytest.raises(ValueError):
        _perfring.Core(events=[GETPID], command=["sh", "a\0b"])
    with pytest.raises(TypeError):
        _perfring.Core(events=[GETPID], filters={GETPID: 5})
    with pytest.raises(perfring.Error) as e:
        _perfring.Core()                     # nothing to read
    assert e.value.errno == errno.EINVAL
    c = _perfring.Core(events=[GETPID], cpus=[0])
    with pytest.raises(RuntimeError):
        c.__init__(events=[GETPID])
    with pytest.raises(perfring.Error) as e:
        c.pull(4000)
    assert e.value.errno == errno.ENOENT
    with pytest.raises(ValueError):
        c.pull(0, -1)
    with pytest.raises(IndexError):
        c.ringbuf_pull(0)
    c.close()
    c.close()
    assert c.closed
    for call in (c.fds, c.stats, c.pull_all, lambda: c.pull(0), lambda: c.hup(0)):
        with pytest.raises(perfring.Error) as e:
            call()
        assert e.value.errno == errno.EBADF
