# SPDX-License-Identifier: MIT
"""What the perfring-watch and perfring-exporter tests share: TAP output, the
build's programs, and a sandbox that removes every file, process and tmux
server a test starts, on every exit path."""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(os.environ.get("top_builddir", "."))
SRC = os.path.abspath(os.environ.get("top_srcdir", "."))


def prog(path):
    return os.path.join(BUILD, path)


class Tap:
    def __init__(self, plan):
        self.plan, self.n, self.failed = plan, 0, 0
        print(f"1..{plan}", flush=True)

    def ok(self, cond, name, *diag):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {name}", flush=True)
        if not cond:
            self.failed += 1
            for d in diag:
                for line in str(d).splitlines()[:40]:
                    print(f"#   {line}", flush=True)
        return cond

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}", flush=True)

    def skip_rest(self, why):
        while self.n < self.plan:
            self.skip("not run", why)

    def done(self):
        if self.n != self.plan:
            print(f"# planned {self.plan}, ran {self.n}", flush=True)
            sys.exit(1)
        sys.exit(1 if self.failed else 0)


class Sandbox:
    """A temporary directory and the processes started in it, all removed at
    exit (normal, exception or SIGTERM/SIGINT/SIGHUP)."""

    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix=f"{name}.")
        self.procs = []
        self.tmux_sock = os.path.join(self.dir, "tmux")
        atexit.register(self.cleanup)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, lambda *_: sys.exit(1))

    def path(self, name):
        return os.path.join(self.dir, name)

    def start(self, argv, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def run(self, argv, timeout=30, **kw):
        p = self.start(argv, **kw)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err = (err or b"") + b"\n(timed out)"
        return p.returncode, out, err

    def stop(self, p, sig=signal.SIGTERM, timeout=10):
        """Signals p and collects its output; kills it if it lingers."""
        if p.poll() is None:
            p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        return p.returncode, out, err

    def tmux(self, *args):
        return subprocess.run(["tmux", "-S", self.tmux_sock, "-f", "/dev/null", *args],
                              capture_output=True, text=True)

    def cleanup(self):
        if os.path.exists(self.tmux_sock):
            self.tmux("kill-server")
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(cond, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def need_root(tap):
    if os.geteuid() != 0:
        print("# SKIP: these tests open system-wide perf events and need root")
        tap.skip_rest("not root")
        tap.done()
