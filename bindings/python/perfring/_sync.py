# SPDX-License-Identifier: MIT
"""perfring.Session: the same options as watch(), read without asyncio: a
selector on the rings' fds and the process's pidfd, and the flush interval
as its timeout."""
import selectors
import time

from ._reader import END, Reader


class Session:
    """with perfring.Session(events=[...]) as s:
           for batch in s.read(duration=1.0): ..."""

    def __init__(self, events=None, software=None, cpus=None, pid=None, command=None,
                 watermark=4096, pages=64, flush_ms=100, order_window_ms=0, filters=None,
                 bpf_output=None, bpf_ringbuf=None):
        self._r = Reader(dict(events=events, software=software, cpus=cpus, pid=pid,
                              command=command, watermark=watermark, pages=pages,
                              flush_ms=flush_ms, order_window_ms=order_window_ms,
                              filters=filters, bpf_output=bpf_output,
                              bpf_ringbuf=bpf_ringbuf))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def read(self, duration=None):
        """Yields batches (lists of Sample) for duration seconds (None: until
        the watched process ends, or forever without one)."""
        if duration is not None:
            if isinstance(duration, bool) or not isinstance(duration, (int, float)):
                raise TypeError(f"duration must be a number, not {type(duration).__name__}")
            if not duration >= 0:
                raise ValueError(f"duration must be >= 0, not {duration}")
        return self._read(duration)

    def _read(self, duration):
        r = self._r
        if r.closed:
            raise ValueError("this session is closed")
        now = time.monotonic()
        deadline = None if duration is None else now + duration
        flush_at = now + r.flush_s
        with selectors.DefaultSelector() as sel:
            for key, fd in r.watched().items():
                sel.register(fd, selectors.EVENT_READ, key)
            if r.pidfd is not None:
                sel.register(r.pidfd, selectors.EVENT_READ, "exit")
            r.mark_all()                   # registering consumed a readiness
            while True:
                batch = r.next_batch()
                if batch is END:
                    return
                if batch:
                    yield batch
                    continue
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return
                wait = flush_at - now if deadline is None else min(flush_at, deadline) - now
                sync = False
                for k, _ in sel.select(max(wait, 0)):
                    if k.data == "exit":
                        sel.unregister(k.fd)
                        r.on_exit()
                    elif k.data == "hotplug":
                        sync = True
                    elif r.on_ready(k.data):
                        sel.unregister(k.fd)
                if time.monotonic() >= flush_at:
                    sync = r.follow
                    r.mark_all()
                    flush_at = time.monotonic() + r.flush_s
                if sync:
                    self._resync(sel)

    def _resync(self, sel):
        new, gone = self._r.sync()
        for key, fd in gone.items():
            try:
                sel.unregister(fd)
            except (KeyError, ValueError):
                pass
        for key, fd in new.items():
            sel.register(fd, selectors.EVENT_READ, key)

    def close(self):
        """Frees the session (a command= child still running is killed). Idempotent."""
        self._r.close()

    @property
    def returncode(self):
        return self._r.returncode

    @property
    def pid(self):
        return self._r.child if self._r.child > 0 else None

    def stats(self):
        return self._r.stats()
