#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The price of crossing into Python: one task's getpid stream (tests/
getpid_n, pinned to CPU 1) at a 4 KiB watermark, read by perfring.watch on
asyncio and by libperfring-uv in C (bindings/node/bench/uv-getpid) on CPU 0:
the consumer CPU per record and per wakeup, medians over rounds, the two
alternating within each round (as bindings/node/bench/getpid.js does).
Run it under flock /tmp/kbench.lock, as root, with perfring importable:
  getpid.py GETPID_N UV_GETPID [-n RECORDS] [-r ROUNDS] [-w WATERMARK] [-p PAGES]"""
import asyncio
import json
import os
import subprocess
import sys
import tempfile

import perfring


def opts(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    o = {"n": 300000, "r": 5, "w": 4096, "p": 64}
    rest = argv[2:]
    for i in range(0, len(rest), 2):
        o[rest[i].lstrip("-")] = int(rest[i + 1])
    return argv[0], argv[1], o


class Generator:
    """getpid_n N 0 FIFO on CPU 1: it waits until go()."""
    made = 0

    def __init__(self, prog, n, d):
        Generator.made += 1
        self.fifo = os.path.join(d, f"go{Generator.made}")
        os.mkfifo(self.fifo)
        self.proc = subprocess.Popen(["taskset", "-c", "1", prog, str(n), "0", self.fifo])

    def go(self):
        os.close(os.open(self.fifo, os.O_WRONLY))

    def done(self):
        self.proc.wait()
        os.unlink(self.fifo)

    def kill(self):
        """For a round that failed: no go will come, so it would wait forever."""
        self.proc.kill()
        self.done()


def thread_ns():
    """ns this thread ran, from the scheduler (as getpid.js reads it)."""
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[0])


async def python_round(prog, o, d):
    g = Generator(prog, o["n"], d)
    records = 0
    try:
        async with perfring.watch(events=["syscalls:sys_enter_getpid"], pid=g.proc.pid,
                                  watermark=o["w"], pages=o["p"]) as w:
            t0 = thread_ns()
            p0 = os.times()
            g.go()
            async for batch in w:
                records += len(batch)
            cpu_us = (thread_ns() - t0) / 1000
            p1 = os.times()
            st = w.stats()
    except BaseException:
        g.kill()
        raise
    g.done()
    return {"records": records, "cpu_us": cpu_us,
            "process_us": (p1.user + p1.system - p0.user - p0.system) * 1e6,
            "wakeups": sum(x["wakeups"] for x in st), "lost": sum(x["lost"] for x in st)}


def c_round(prog, uv, o, d):
    g = Generator(prog, o["n"], d)
    c = subprocess.Popen(["taskset", "-c", "0", uv, str(g.proc.pid), str(o["w"]), str(o["p"])],
                         stdout=subprocess.PIPE, text=True)
    result = None
    for line in c.stdout:
        if line.strip() == "ready":
            g.go()
        elif line.startswith("{"):
            result = json.loads(line)
    c.wait()
    if result is None or c.returncode:
        g.kill()
        sys.exit(f"getpid.py: {uv} exited with status {c.returncode}"
                 f"{'' if result else ' before its result line'} (its own message, if any, "
                 "is above); no C row to compare with")
    g.done()
    return result

def median(xs):
    return sorted(xs)[len(xs) // 2]


def row(name, runs):
    def per(k, by):
        return median([x[k] / x[by] for x in runs])
    return (f"| {name} | {median([x['records'] for x in runs])} | "
            f"{per('cpu_us', 'records') * 1000:.1f} | {per('wakeups', 'records') * 1000:.2f} | "
            f"{per('cpu_us', 'wakeups'):.1f} | {sum(x['lost'] for x in runs)} |")


def main():
    prog, uv, o = opts(sys.argv[1:])
    os.sched_setaffinity(0, {0})
    py, c, ratios = [], [], []
    with tempfile.TemporaryDirectory(prefix="perfring-bench-") as d:
        for i in range(o["r"]):
            # Alternate which goes first, so neither always has the warmer cache.
            if i % 2:
                c.append(c_round(prog, uv, o, d))
                py.append(asyncio.run(python_round(prog, o, d)))
            else:
                py.append(asyncio.run(python_round(prog, o, d)))
                c.append(c_round(prog, uv, o, d))
            ratios.append((py[-1]["cpu_us"] / py[-1]["records"]) /
                          (c[-1]["cpu_us"] / c[-1]["records"]))
            print(f"round {i + 1}: python {py[-1]}, c {c[-1]}", file=sys.stderr)
    print(f"{o['n']} getpid records a round, watermark {o['w']} B, {o['p']} pages, "
          f"{o['r']} rounds (medians)")
    print("| consumer | records | CPU ns/record | wakeups/1000 records | CPU us/wakeup | lost |")
    print("|---|---|---|---|---|---|")
    print(row("perfring.watch (Python, asyncio)", py))
    print(row("libperfring-uv (C, uv-getpid)", c))
    print(f"median per-round ratio Python/C, CPU per record: {median(ratios):.2f}x "
          f"(rounds {min(ratios):.2f}-{max(ratios):.2f})")
    bad = [x for x in py + c if x["records"] != o["n"] or x["lost"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
