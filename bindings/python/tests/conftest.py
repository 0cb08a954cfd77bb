# SPDX-License-Identifier: MIT
"""Fixtures of the Python module's tests, and their TAP report (to the fd in
PERFRING_TAP_FD, for bindings/python/test_python.sh under automake)."""
import os
import subprocess
import tempfile

import pytest

GETPID_N = os.environ.get("PERFRING_GETPID_N", "")
# A sanitizer tree's runner preloads the runtime for this interpreter only:
# the watched programs must not load it (ASan's start calls getpid).
os.environ.pop("LD_PRELOAD", None)


@pytest.fixture
def getpid_n():
    """tests/getpid_n: calls getpid(2) exactly N times, then exits STATUS."""
    if not os.access(GETPID_N, os.X_OK):
        pytest.fail(f"PERFRING_GETPID_N={GETPID_N!r} is not the built tests/getpid_n")
    return GETPID_N


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


@pytest.fixture
def no_fd_left():
    """Fails the test when it leaves an fd open (/proc/self/fd before/after)."""
    before = open_fds()
    yield
    import gc
    gc.collect()
    after = open_fds()
    assert after == before, f"fds left open: before {before}, after {after}"


class Waiting:
    """getpid_n started waiting on a FIFO: go() lets it make its calls."""

    def __init__(self, prog, n, status=0):
        self.dir = tempfile.mkdtemp(prefix="perfring-py-")
        self.fifo = os.path.join(self.dir, "go")
        os.mkfifo(self.fifo)
        self.proc = subprocess.Popen([prog, str(n), str(status), self.fifo])
        self.pid = self.proc.pid

    def go(self):
        os.close(os.open(self.fifo, os.O_WRONLY))

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.unlink(self.fifo)
        os.rmdir(self.dir)


@pytest.fixture
def waiting(getpid_n):
    made = []

    def make(n, status=0):
        w = Waiting(getpid_n, n, status)
        made.append(w)
        return w
    yield make
    for w in made:
        w.close()


# --------------------------------------------------------------- TAP report
_tap = {"n": 0, "out": None}


def _emit(line):
    if _tap["out"] is None:
        fd = os.environ.get("PERFRING_TAP_FD")
        if not fd:
            return
        _tap["out"] = os.fdopen(int(fd), "w", buffering=1)
    _tap["out"].write(line + "\n")


def pytest_collectreport(report):
    if report.failed:
        _tap["n"] += 1
        _emit(f"not ok {_tap['n']} - collecting {report.nodeid}")


def pytest_runtest_logreport(report):
    name = report.nodeid.replace("#", "_")
    if report.when == "call" or (report.when == "setup" and not report.passed) or \
            (report.when == "teardown" and report.failed):
        _tap["n"] += 1
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            _emit(f"ok {_tap['n']} - {name} # SKIP {reason}")
        elif report.passed:
            _emit(f"ok {_tap['n']} - {name}")
        else:
            _emit(f"not ok {_tap['n']} - {name} ({report.when})")


def pytest_sessionfinish(session, exitstatus):
    _emit(f"1..{_tap['n']}")
