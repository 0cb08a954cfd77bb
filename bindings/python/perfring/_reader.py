# SPDX-License-Identifier: MIT
"""What both loops share: a started Core, which of its rings are ready, the
end of a watched process (a pidfd; command='s child is reaped here), the
order window, the counts. The loop (asyncio or selectors) only reports
readiness, flush ticks and the exit, and asks for the next batch."""
import os
import signal
import time

from . import _opts
from ._order import Orderer
from ._perfring import Core

END = object()   # next_batch(): the watch is over
BUDGET = 4096    # records per pull: the loop's other tasks run between pulls


class Reader:
    def __init__(self, options):
        kw, self.flush_s = _opts.core_args(**options)
        window = options.get("order_window_ms", 0)
        self.core = Core(**kw)
        self.child = self.core.child_pid
        if self.child > 0:
            self.core.disown_child()       # reaped here, from its pidfd
        self.returncode = None
        self.exited = False
        self.pidfd = None
        pid = self.child if self.child > 0 else kw["pid"]
        try:
            self.pidfd = _opts.pidfd(pid)
        except ProcessLookupError:         # pid= gone already: read what is left
            self.exited = True
        except BaseException:
            self.close()
            raise
        self.pid_mode = pid > 0
        self.rings = dict(self.core.fds())                      # cpu -> fd
        self.ringbufs = {-1 - i: fd for i, fd in self.core.ringbuf_fds()}
        self.wakeups = dict.fromkeys(self.rings, 0)
        self.orderer = Orderer(window) if window else None
        self.ready = {}
        self.pending = []                  # samples of CPUs that went offline
        self.closed = False
        self.follow = kw["follow_hotplug"]
        hp = self.core.hotplug_fd()        # None: no uevent socket, flushes only
        self.hotplug = {} if hp is None else {"hotplug": hp}
        self.mark_all()                    # the drain after attaching

    def watched(self):
        """{key: fd}: every ring (key = its CPU), ring buffer (key < 0) and
        the hotplug notifier (key "hotplug")."""
        return {**self.rings, **self.ringbufs, **self.hotplug}

    def sync(self):
        """Makes the CPU changes sysfs shows (when the notifier is readable,
        and at each flush); returns ({key: fd} to watch, {key: fd} to stop
        watching): a CPU that left, one that came, one whose fd changed."""
        drained = self.core.hotplug_sync()
        if drained:
            self.pending.append(drained)
        rings = dict(self.core.fds())
        gone = {k: fd for k, fd in self.rings.items() if rings.get(k) != fd}
        new = {k: fd for k, fd in rings.items() if self.rings.get(k) != fd}
        self.rings = rings
        for k in new:
            self.wakeups.setdefault(k, 0)
            self.ready[k] = None           # the drain after watching it
        for k in gone:
            if k not in rings:
                self.ready.pop(k, None)
        return new, gone

    def mark_all(self):
        self.ready.update(dict.fromkeys(self.rings))
        self.ready.update(dict.fromkeys(self.ringbufs))

    def on_ready(self, key):
        """A ring's fd is readable; True when it reported its end (HUP: the
        loop stops watching it, the flush reads it on until the exit)."""
        if key == "hotplug":
            return False
        self.ready[key] = None
        if key >= 0:
            self.wakeups[key] += 1
            return self.pid_mode and not self.closed and self.core.hup(key)
        return False

    def on_exit(self):
        """The watched process has exited: drain everything once more, end."""
        self.exited = True
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self._reap(0)
        if not self.closed:
            self.core.stop()    # the last drain reads the kernel's drop counts (R4)
        self.mark_all()

    def _reap(self, flags):
        if self.child > 0 and self.returncode is None:
            try:
                pid, status = os.waitpid(self.child, flags)
            except ChildProcessError:
                return
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)

    def next_batch(self):
        """A non-empty list of Samples, None when nothing is ready, or END."""
        if self.closed:
            return END
        if self.pending and self.orderer is None:
            return self.pending.pop(0)
        if self.pending:
            self.orderer.add(self.pending.pop(0))
        if self.orderer is not None:
            # T before any ring is read, and every ring read: a ring not
            # read since may hold a sample older than T - W (the core's rule).
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            self.mark_all()
        while self.ready:
            key = next(iter(self.ready))
            del self.ready[key]
            if key >= 0:
                batch, more = self.core.pull(key, BUDGET)
                if more:
                    self.ready[key] = None
            else:
                batch = self.core.ringbuf_pull(-1 - key)
            if self.orderer is None:
                if batch:
                    return batch
            else:
                self.orderer.add(batch)
        if self.orderer is not None:
            batch = self.orderer.take(now, everything=self.exited)
            if batch:
                return batch
        return END if self.exited else None

    def stats(self):
        if self.closed:
            return self.last_stats
        st = self.core.stats()
        for d in st:
            d["wakeups"] += self.wakeups.get(d["cpu"], 0)
        return st

    def close(self):
        if getattr(self, "closed", False):
            return
        try:
            self.last_stats = self.stats() if hasattr(self, "rings") else []
        except Exception:
            self.last_stats = []
        self.closed = True
        try:
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None
            if self.child > 0 and self.returncode is None:
                self._reap(os.WNOHANG)
                if self.returncode is None:    # closed before the child's end
                    try:
                        os.kill(self.child, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    self._reap(0)
        finally:
            self.core.close()
