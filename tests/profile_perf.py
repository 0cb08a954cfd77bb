# SPDX-License-Identifier: MIT
"""The profiler's sample types decoded by libperfring and by perf, on the
same getpid calls recorded by both at once: user registers, user stack size,
weight, data_src, phys_addr, cgroup and page sizes must agree, sample for
sample (the k-th sample of a thread against the k-th)."""
import os
import re
import shutil
import signal
import subprocess
import time

from watchlib import Sandbox, Tap, need_root, prog

N = 300
tap = Tap(6)
need_root(tap)
if not shutil.which("perf"):
    tap.skip_rest("perf (linux-perf) is not installed")
    tap.done()
box = Sandbox("profile_perf")
G, DUMP = prog("tests/getpid_n"), prog("tests/profile_dump")
TP = "/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id"
PAGE = {"N/A": 0, "4K": 4096, "2M": 2 << 20, "1G": 1 << 30}


def perf_samples(dump):
    """(tid, [regs], ustack size, weight, data_src, phys, dps, cps) per SAMPLE of -D."""
    out, cur = [], None
    for line in dump.splitlines():
        m = re.match(r"\d+ \d+ 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE\(.*\): (\d+)/(\d+):",
                     line)
        if m:
            cur = {"tid": int(m.group(2)), "regs": []}
            out.append(cur)
        elif cur is None:
            continue
        elif m := re.match(r"\.\.\.\. \S+\s+0x([0-9a-f]+)$", line):
            cur["regs"].append(int(m.group(1), 16))
        elif m := re.match(r"\.\.\. ustack: size (\d+)", line):
            cur["dyn"] = int(m.group(1))
        elif m := re.match(r"\.\.\. weight: (\d+),0x([0-9a-f]+),0x([0-9a-f]+)", line):
            cur["weight"] = int(m.group(1)) | int(m.group(2), 16) << 32 | int(m.group(3), 16) << 48
        elif m := re.match(r" \. data_src: 0x([0-9a-f]+)", line):
            cur["data_src"] = int(m.group(1), 16)
        elif m := re.match(r" \.\. phys_addr: 0x([0-9a-f]+)", line):
            cur["phys"] = int(m.group(1), 16)
        elif m := re.match(r" \.\. data page size: (\S+)", line):
            cur["dps"] = PAGE.get(m.group(1), -1)
        elif m := re.match(r" \.\. code page size: (\S+)", line):
            cur["cps"] = PAGE.get(m.group(1), -1)
    return out


def our_samples(text):
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 10 or f[0] == "ready":
            continue
        regs = [int(x, 16) for x in f[3:-7]]
        out.append({"tid": int(f[0]), "abi": int(f[2]), "regs": regs, "dyn": int(f[-7]),
                    "weight": int(f[-6], 16), "data_src": int(f[-5], 16),
                    "phys": int(f[-4], 16), "cgroup": int(f[-3]), "dps": int(f[-2]),
                    "cps": int(f[-1])})
    return out


tp_id = open(TP).read().strip()
fifo = box.path("go")
os.mkfifo(fifo)
gen = box.start([G, str(N), "0", fifo])
ctl, ack = box.path("ctl"), box.path("ack")
os.mkfifo(ctl)
os.mkfifo(ack)
perf = box.start(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-p", str(gen.pid),
                  "-e", "syscalls:sys_enter_getpid", "--call-graph", "dwarf,1024", "-d", "-W",
                  "--phys-data", "--data-page-size", "--code-page-size", "--all-cgroups",
                  "-o", box.path("perf.data"), "-D", "-1", "--control", f"fifo:{ctl},{ack}"])
dump = box.start([DUMP, str(gen.pid), tp_id])
ready = dump.stdout.readline().decode().strip()
with open(ctl, "w") as c, open(ack) as a:
    c.write("enable\n")
    c.flush()
    perf_ack = a.readline().strip()
with open(fifo, "w"):
    pass
gen.wait(timeout=30)
dout, derr = dump.communicate(timeout=30)   # it ends once the process has exited
drc = dump.returncode
time.sleep(0.2)
prc = box.stop(perf, signal.SIGINT)[0]
script = subprocess.run(["perf", "script", "-D", "-i", box.path("perf.data")],
                        capture_output=True, text=True, timeout=60).stdout
# perf report -s cgroup names each sample's cgroup from its PERF_SAMPLE_CGROUP
# id and the CGROUP records: "overhead overhead samples pid:comm path".
cg = subprocess.run(["perf", "report", "-i", box.path("perf.data"), "-s", "pid,cgroup",
                     "--stdio", "-g", "none", "-n"], capture_output=True, text=True,
                    timeout=60).stdout
theirs = [s for s in perf_samples(script) if s["tid"] == gen.pid]
ours = [s for s in our_samples(dout.decode()) if s["tid"] == gen.pid]

tap.ok(ready == "ready" and perf_ack == "ack" and drc == 0 and len(theirs) == N and len(ours) == N,
       f"both decode the {N} samples of the getpid calls: ours {len(ours)}, perf's {len(theirs)}",
       ready, perf_ack, drc, derr.decode())


def same(key):
    bad = [i for i, (o, t) in enumerate(zip(ours, theirs)) if o.get(key) != t.get(key)]
    return not bad and len(ours) == len(theirs) == N, bad[:3]


ok, bad = same("regs")
tap.ok(ok and all(o["abi"] == 2 and len(o["regs"]) == 20 for o in ours),
       "REGS_USER: every sample's 20 registers (mask 0xff0fff) equal perf's",
       f"first differing samples {bad}",
       f"ours {ours[bad[0]]['regs'][:4] if bad else ''}",
       f"perf {theirs[bad[0]]['regs'][:4] if bad else ''}")
ok, bad = same("dyn")
tap.ok(ok, "STACK_USER: the user stack size (dyn_size) equals perf's ustack size",
       f"first differing samples {bad}")
ok_w, bad_w = same("weight")
ok_d, bad_d = same("data_src")
ok_p, bad_p = same("phys")
tap.ok(ok_w and ok_d and ok_p, "WEIGHT_STRUCT, DATA_SRC and PHYS_ADDR equal perf's",
       f"weight {bad_w}, data_src {bad_d}, phys_addr {bad_p}")
ok_1, bad_1 = same("dps")
ok_2, bad_2 = same("cps")
tap.ok(ok_1 and ok_2, "DATA_PAGE_SIZE and CODE_PAGE_SIZE equal perf's",
       f"data {bad_1}, code {bad_2}")
# perf names the cgroup's path (from its CGROUP records); ours is the id,
# the inode of that directory under the cgroup2 mount.
mnt = next((ln.split()[1] for ln in open("/proc/self/mounts") if ln.split()[2] == "cgroup2"), "")
rows = [ln.split() for ln in cg.splitlines() if ln.strip() and not ln.startswith("#")]
paths = {r[4]: int(r[2]) for r in rows if len(r) == 5 and r[3].startswith(f"{gen.pid}:")}
inodes = {os.stat(mnt + p).st_ino for p in paths if mnt and os.path.isdir(mnt + p)}
tap.ok(sum(paths.values()) == N and len(inodes) == len(paths) == 1 and
       all(o["cgroup"] in inodes for o in ours),
       "CGROUP: every sample's id is the inode of the cgroup perf names for it",
       f"perf: {paths}, their inodes {inodes}", f"ours {sorted({o['cgroup'] for o in ours})[:3]}")
tap.done()
