# SPDX-License-Identifier: MIT
"""The options of watch() and Session(), checked: a wrong type raises
TypeError, a bad value ValueError; what only the library can tell (an unknown
tracepoint, a filter the kernel refuses) raises perfring.Error."""
import os
import resource

_MAX_U31 = 2**31 - 1


def _int(name, v, lo, hi):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}, not {v}")
    return v


def _num(name, v, lo, hi):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(v).__name__}")
    if not lo <= v <= hi:  # also refuses NaN
        raise ValueError(f"{name} must be from {lo} to {hi}, not {v}")
    return v


def _strs(name, v):
    if v is None:
        return []
    if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
        raise TypeError(f"{name} must be a list of str, not {type(v).__name__}")
    for e in v:
        if not isinstance(e, str):
            raise TypeError(f"each of {name} must be a str, not {type(e).__name__}")
        if not e or "\0" in e:
            raise ValueError(f"{name}: {e!r} is empty or holds a NUL")
    return list(v)


def _map(name, v):
    if v is None:
        return None
    one = lambda m: m if isinstance(m, str) or (isinstance(m, int) and not isinstance(m, bool)) else None
    if isinstance(v, (list, tuple)):
        if any(one(m) is None for m in v):
            raise TypeError(f"{name} must be map fds (int) or pin paths (str)")
        return list(v)
    if one(v) is None:
        raise TypeError(f"{name} must be a map fd (int) or a pin path (str), not {type(v).__name__}")
    return v


def core_args(events=None, software=None, cpus=None, pid=None, command=None, watermark=4096,
              pages=64, flush_ms=100, order_window_ms=0, filters=None, bpf_output=None,
              bpf_ringbuf=None):
    """(kwargs of _perfring.Core, flush seconds)."""
    events = _strs("events", events)
    software = _strs("software", software)
    for e in software:
        if ":" in e:
            raise ValueError(f"software: {e!r} is a tracepoint: give it in events")
    if not events and not software and bpf_output is None and bpf_ringbuf is None:
        raise ValueError("give at least one of events, software, bpf_output, bpf_ringbuf")
    if cpus is not None:
        if isinstance(cpus, (str, bytes)) or not isinstance(cpus, (list, tuple, range)):
            raise TypeError(f"cpus must be a list of int, not {type(cpus).__name__}")
        cpus = [_int("cpus[]", c, 0, 4095) for c in cpus]
        if not cpus:
            raise ValueError("cpus must hold at least one CPU (None: every online CPU)")
    if pid is not None:
        _int("pid", pid, 1, _MAX_U31)
    if command is not None:
        command = _strs("command", command)
        if not command:
            raise ValueError("command must name a program")
        if pid is not None:
            raise ValueError("give command or pid, not both")
    _int("pages", pages, 1, 1 << 18)
    if pages & (pages - 1):
        raise ValueError(f"pages must be a power of two, not {pages}")
    ring = pages * resource.getpagesize()
    _int("watermark", watermark, 0, _MAX_U31)
    if watermark >= ring:
        raise ValueError(f"watermark ({watermark}) must be below the ring's {ring} bytes "
                         f"(pages={pages})")
    _num("flush_ms", flush_ms, 1, 86400000)
    _num("order_window_ms", order_window_ms, 0, 86400000)
    if filters is not None:
        if not isinstance(filters, dict):
            raise TypeError(f"filters must be a dict, not {type(filters).__name__}")
        for k, f in filters.items():
            if not isinstance(k, str) or not isinstance(f, str):
                raise TypeError("filters must map an event name (str) to a filter (str)")
            if k not in events:
                raise ValueError(f"filters: {k!r} is not one of events")
            if "\0" in f:
                raise ValueError(f"filters: the filter of {k!r} holds a NUL")
    kw = dict(events=events, software=software, cpus=cpus, pid=pid or 0, command=command,
              watermark=watermark, pages=pages, flush_ms=int(flush_ms),
              order_window_ns=int(order_window_ms * 1000000), filters=filters,
              bpf_output=_map("bpf_output", bpf_output),
              bpf_ringbuf=_map("bpf_ringbuf", bpf_ringbuf),
              # Without a chosen list, the CPUs as they come and go.
              follow_hotplug=cpus is None)
    return kw, flush_ms / 1000.0


def pidfd(pid):
    """A pidfd of the watched process, or None (pid 0: every task)."""
    return os.pidfd_open(pid) if pid > 0 else None
