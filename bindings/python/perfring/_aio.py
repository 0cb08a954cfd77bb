# SPDX-License-Identifier: MIT
"""perfring.watch(): the rings read on the running asyncio loop. Each ring's
fd is watched with loop.add_reader() (readiness is one-shot: the loop only
notes it, the consumer's next step pulls the batch), a flush timer
(loop.call_later) reads what stays below the watermark, and with pid= or
command= the process's pidfd tells its end. No thread, no polling."""
import asyncio
import weakref

from ._reader import END, Reader


class _State:
    """What the loop's callbacks hold: never the Watch itself, so that a
    watch dropped unclosed is collected and its finalizer closes this."""

    def __init__(self, loop, reader):
        self.loop, self.r = loop, reader
        self.waiter = None
        self.error = None
        self.turned = False     # the consumer's last step waited on the loop
        self.fds = {}
        try:
            for key, fd in reader.watched().items():
                loop.add_reader(fd, self.ready, key)
                self.fds[key] = fd
            if reader.pidfd is not None:
                loop.add_reader(reader.pidfd, self.exit)
                self.fds["exit"] = reader.pidfd
            self.timer = loop.call_later(reader.flush_s, self.tick)
        except BaseException:
            self.timer = None
            self.close()
            raise

    def wake(self):
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)
        self.waiter = None

    def unwatch(self, key):
        fd = self.fds.pop(key, None)
        if fd is not None:
            self.loop.remove_reader(fd)

    def failed(self, e):
        """A callback's error reaches the consumer's next step, not the
        loop's exception handler."""
        if self.error is None:
            self.error = e
        self.wake()

    def ready(self, key):
        try:
            if key == "hotplug":
                self.resync()
            elif self.r.on_ready(key):
                self.unwatch(key)
        except Exception as e:
            self.unwatch(key)
            return self.failed(e)
        self.wake()

    def resync(self):
        new, gone = self.r.sync()
        for key in gone:
            self.unwatch(key)
        for key, fd in new.items():
            self.loop.add_reader(fd, self.ready, key)
            self.fds[key] = fd

    def tick(self):
        self.timer = self.loop.call_later(self.r.flush_s, self.tick)
        try:
            if self.r.follow:
                self.resync()      # uevents can be lost: sysfs tells at each flush
        except Exception as e:
            return self.failed(e)
        self.r.mark_all()
        self.wake()

    def exit(self):
        self.unwatch("exit")
        try:
            self.r.on_exit()
        except Exception as e:
            return self.failed(e)
        self.wake()

    def close(self):
        try:
            if not self.loop.is_closed():
                for key in list(self.fds):
                    self.unwatch(key)
                if self.timer is not None:
                    self.timer.cancel()
        finally:
            self.fds.clear()
            self.r.close()
            self.wake()


class Watch:
    """An async context manager and async iterator of batches (a list of
    perfring.Sample per wakeup). See perfring.watch()."""

    def __init__(self, **options):
        self._options = options
        self._state = None
        self._reader = None
        self._closed = False
        self._finalizer = None

    def _open(self):
        if self._closed:
            raise ValueError("this watch is closed")
        if self._state is None:
            loop = asyncio.get_running_loop()
            self._reader = Reader(self._options)
            self._state = _State(loop, self._reader)
            self._finalizer = weakref.finalize(self, _State.close, self._state)
        return self._state

    async def __aenter__(self):
        self._open()
        return self

    async def __aexit__(self, *exc):
        self.close()
        return False

    def __aiter__(self):
        return self

    async def __anext__(self):
        st = self._open() if not self._closed else None
        if st is None:
            raise StopAsyncIteration
        # A turn of the loop between two batches: a ring that is always
        # ready must not keep the loop's other tasks waiting. Waiting for
        # a readiness is that turn; only a batch returned without one
        # yields first.
        if not st.turned:
            await asyncio.sleep(0)
        st.turned = False
        while True:
            if st.error is not None:
                e, st.error = st.error, None
                raise e
            batch = st.r.next_batch()
            if batch is END:    # the process and its last record: free it all now
                self.close()
                raise StopAsyncIteration
            if batch:
                return batch
            st.waiter = st.loop.create_future()
            await st.waiter
            st.turned = True

    def close(self):
        """Stops watching and frees the session; with command=, a child still
        running is killed (SIGKILL) and reaped. Idempotent."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()

    async def aclose(self):
        self.close()

    @property
    def returncode(self):
        """command='s exit status once the watch has ended (as
        subprocess.Popen.returncode: -N for signal N), else None."""
        return self._reader.returncode if self._reader else None

    @property
    def pid(self):
        """The watched process: command='s child, or pid=; None for every task."""
        if self._reader is None:
            return None
        return self._reader.child if self._reader.child > 0 else self._options.get("pid")

    def stats(self):
        """[{"cpu": 0, "records": ..., "lost": ..., ...}] per CPU."""
        return self._reader.stats() if self._reader else []


def watch(events=None, software=None, cpus=None, pid=None, command=None, watermark=4096,
          pages=64, flush_ms=100, order_window_ms=0, filters=None, bpf_output=None,
          bpf_ringbuf=None):
    """Watches events on the running asyncio loop:

        async with perfring.watch(events=["sched:sched_switch"]) as w:
            async for batch in w:
                ...

    events: tracepoints "system:name" (or software event names);
    software: "page-faults", "cpu-clock", ...; cpus: a list (None: every
    online CPU); pid: one process (and its threads and children); command:
    a program and its arguments, started stopped and watched from its exec
    on (w.returncode after the end); watermark: bytes that wake the reader;
    pages: ring data pages per CPU (a power of two); flush_ms: how long a
    record below the watermark waits at most; order_window_ms: deliver in
    time order across CPUs, holding samples back this long; filters:
    {"system:name": "ftrace filter"}; bpf_output / bpf_ringbuf: a map fd or
    a pin path (or a list). With pid or command the iteration ends after the
    process's exit and its last record."""
    return Watch(events=events, software=software, cpus=cpus, pid=pid, command=command,
                 watermark=watermark, pages=pages, flush_ms=flush_ms,
                 order_window_ms=order_window_ms, filters=filters, bpf_output=bpf_output,
                 bpf_ringbuf=bpf_ringbuf)
