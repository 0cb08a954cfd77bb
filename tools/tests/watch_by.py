# SPDX-License-Identifier: MIT
"""perfring-watch --by, --print, --filter and the shared TTY screen, end to end
(TAP, run by tools/tests/test_watch_by.sh as root). Every count is exact:
the workloads (tests/getpid_n, tools/tests/taskname) make a known number of
events."""
import collections
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time

from watchlib import SRC, Sandbox, Tap, need_root, prog, wait_for

W = prog("tools/perfring-watch")
GETPID = prog("tests/getpid_n")
TASKNAME = prog("tools/tests/taskname")
HOSTILE = "\033[2J\"q\\"                 # ESC [ 2 J, a quote and a backslash
HOSTILE_SHOWN = '\\x1b[2J"q\\\\'          # as every mode must show it

tap = Tap(28)
need_root(tap)
box = Sandbox("test_watch_by")


def json_lines(out):
    return [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]


def by_rows(summary, i=0):
    return summary["by"][i]["rows"]


# --by on an integer field: 5,000 getpid calls from one pid count 5,000.
rc, out, err = box.run([W, "--by", "syscalls:sys_enter_getpid:common_pid", "--pages", "256",
                        "--json", "--", GETPID, "5000"])
objs = json_lines(out)
start, summary = (objs[0], objs[-1]) if len(objs) >= 2 else ({}, {})
rows = {r["value"]: r["count"] for r in by_rows(summary)} if summary.get("by") else {}
tap.ok(rc == 0 and rows.get(str(start.get("pid"))) == 5000,
       "--by common_pid: the child's pid counts exactly 5,000", rows, err.decode())
tap.ok(summary.get("by", [{}])[0].get("total") == 5000 and summary["by"][0]["other"] == 0,
       "--by: the table's total is every sample, none in other", summary.get("by"))

# --by on a string field with 5,001 distinct values (5,000 renames and the
# exec's own) and --max-series 100: 100 rows, and "other" makes up the rest.
rc, out, err = box.run([W, "--by", "task:task_rename:newcomm", "--max-series", "100", "--pages",
                        "256", "--json", "--", TASKNAME, "5000", "n%ld", "0"])
objs = json_lines(out)
b = objs[-1]["by"][0] if objs and objs[-1].get("by") else {"rows": [], "total": 0, "other": 0}
tap.ok(rc == 0 and len(b["rows"]) == 100 and b["values"] == 100,
       "--max-series 100: exactly 100 rows", len(b["rows"]), err.decode())
tap.ok(b["total"] == 5001 and b["other"] + sum(r["count"] for r in b["rows"]) == b["total"],
       "--max-series: rows plus other make up the total of 5,001", b["total"], b["other"])
tap.ok(b["other"] == 4901 and all(r["count"] == 1 for r in b["rows"]),
       "--max-series: each kept value counted once, 4,901 in other", b["other"])
intervals = [o for o in objs if o.get("type") == "interval"]
tap.ok(all("by" in o for o in intervals), "--json: every interval object carries its --by table")


# --print against perf script, run at the same time on the same events.
# perf script's default line is "comm tid [cpu] time: event: k=v ...";
# ours is "comm pid/tid [cpu] time: event: k=v ...".
PERF_LINE = re.compile(r"\s*.*?\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
OUR_LINE = re.compile(r"\s*.*?\s+(\d+)/\d+\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)$")


def fields(pattern, line):
    """((event, pid, values), time) of one line, or None."""
    m = pattern.match(line)
    if not m:
        return None
    vals = tuple(kv.split("=", 1)[1] for kv in m.group(4).split())
    return (m.group(3), int(m.group(1)), vals), float(m.group(2))


def print_vs_perf():
    gen = box.start([TASKNAME, "0", "x", "500", "go"], stdin=subprocess.PIPE)
    filt = f"common_pid == {gen.pid}"
    ctl, ack = box.path("ctl"), box.path("ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    perf = box.start(["perf", "record", "-q", "-a", "-e", "signal:signal_generate", "--filter",
                      filt, "-o", box.path("perf.data"), "-D", "-1", "--control",
                      f"fifo:{ctl},{ack}"])
    watch = box.start([W, "-e", "signal:signal_generate", "--filter", filt, "--print"])
    ready = watch.stderr.readline().decode()
    with open(ctl, "w") as c, open(ack) as a:
        c.write("enable\n")
        c.flush()
        perf_ack = a.readline()
    gen.stdin.write(b"g")
    gen.stdin.close()
    gen.wait(timeout=10)
    time.sleep(0.5)
    prc = box.stop(perf, signal.SIGINT)[0]
    wrc, wout, werr = box.stop(watch, signal.SIGINT)
    script = subprocess.run(["perf", "script", "-i", box.path("perf.data")], capture_output=True,
                            text=True, timeout=30).stdout
    theirs = [f for f in (fields(PERF_LINE, x) for x in script.splitlines()) if f]
    ours = [f for f in (fields(OUR_LINE, x) for x in wout.decode().splitlines()) if f]
    return ready, perf_ack, prc, wrc, werr, theirs, ours


if shutil.which("perf"):
    ready, perf_ack, prc, wrc, werr, theirs, ours = print_vs_perf()
    t_set = collections.Counter(f for f, _ in theirs)
    o_set = collections.Counter(f for f, _ in ours)
    sig10 = sum(n for (ev, _, v), n in o_set.items() if v and v[0] == "10")
    # perf record ends itself with the SIGINT it caught.
    tap.ok(perf_ack.strip() == "ack" and prc in (0, -signal.SIGINT) and wrc == 0 and
           sig10 == 500,
           "--print: 500 signal_generate lines for the 500 signals", sig10, perf_ack, prc, wrc,
           werr.decode())
    tap.ok(o_set == t_set and len(theirs) >= 500,
           "--print equals perf script field for field (multiset of event, pid, values)",
           f"perf only: {list((t_set - o_set).items())[:3]}",
           f"ours only: {list((o_set - t_set).items())[:3]}")
    times = [t for _, t in ours]
    tap.ok(times == sorted(times) and "time-ordered" in ready,
           "--print: lines in time order, and it says in which window", ready)
else:
    for name in ("--print count", "--print equals perf script", "--print order"):
        tap.skip(name, "perf (linux-perf) is not installed")

# A __data_loc string field (sched_process_exec's filename) is printed too.
rc, out, err = box.run([W, "-e", "sched:sched_process_exec", "--print", "--", "/bin/true"])
lines = [line for line in out.decode().splitlines() if "sched_process_exec:" in line]
tap.ok(rc == 0 and len(lines) == 1 and " filename=/bin/true " in lines[0] + " " and
       re.search(r" pid=\d+ old_pid=\d+", lines[0]),
       "--print: a __data_loc field (filename=) among the others", lines, err.decode())

# --filter: the kernel's refusal reaches the user as a sentence, exit 2.
rc, out, err = box.run([W, "-e", "signal:signal_generate", "--filter", "no_such_field == 1",
                        "-d", "1"])
tap.ok(rc == 2 and b"no_such_field" in err, "--filter: a refused filter is quoted, exit 2",
       rc, err.decode())
rc, out, err = box.run([W, "--filter", "sig == 9", "-d", "1"])
tap.ok(rc == 2 and b"must follow" in err, "--filter before any -e is a usage error", err.decode())

# Hostile values: a comm holding an escape sequence, a quote and a backslash.
host_cmd = [TASKNAME, "1", HOSTILE, "3"]
rc, out, err = box.run([W, "-e", "sched:sched_switch", "--by", "sched:sched_switch:prev_comm",
                        "--", *host_cmd])
tap.ok(rc == 0 and b"\033" not in out and HOSTILE_SHOWN.encode() in out,
       "hostile comm: the piped --by table shows it escaped, never raw", out.decode()[-800:])
rc, out, err = box.run([W, "-e", "sched:sched_switch", "--by", "sched:sched_switch:prev_comm",
                        "--json", "--", *host_cmd])
vals = [r["value"] for r in json_lines(out)[-1]["by"][0]["rows"]] if rc == 0 else []
tap.ok(b"\033" not in out and HOSTILE_SHOWN in vals,
       "hostile comm: --json carries it escaped", vals)
rc, out, err = box.run([W, "-e", "signal:signal_generate", "--print", "--", *host_cmd])
lines = [line for line in out.decode().splitlines() if "sig=10" in line]
tap.ok(rc == 0 and b"\033" not in out and len(lines) == 3 and
       all(line.lstrip().startswith(HOSTILE_SHOWN) and
           'comm="\\x1b[2J\\"q\\\\"' in line for line in lines),
       "hostile comm: --print escapes the comm column and quotes the comm= field", lines)


# The TTY screen under tmux: the delivery table and the --by table share it.
def tty_run(cols, rows, lang, cmd, until, timeout=20, history=()):
    box.tmux("kill-server")
    shell = f"env LANG={lang} LC_ALL={lang} " + " ".join(shlex.quote(a) for a in cmd)
    box.tmux("-u", "new-session", "-d", "-s", "w", "-x", str(cols), "-y", str(rows), shell)
    box.tmux("set-option", "-t", "w", "remain-on-exit", "on")
    capture = ["-u", "capture-pane", "-p", "-J", *history, "-t", "w"]
    screen = wait_for(lambda: (lambda s: s if until(s) else None)(box.tmux(*capture).stdout),
                      timeout)
    screen = screen or box.tmux(*capture).stdout
    box.tmux("send-keys", "-t", "w", "C-c")
    time.sleep(0.3)
    box.tmux("kill-server")
    return screen


def two_frames(s):
    """A frame two seconds in, with at least one --by row."""
    return re.search(r"^perfring-watch: .* [2-9] s$", s, re.M) and \
        re.search(r"^\s+\d+\s+[\d.]+\s+[\d.]+%", s, re.M)


for cols, rows, lang in ((80, 24, "C"), (200, 50, "C.UTF-8")):
    if not shutil.which("tmux"):
        for _ in range(2):
            tap.skip(f"TTY {cols}x{rows}", "tmux is not installed")
        continue
    # A loaded machine (CI's sanitizer trees) may take a while to show two frames.
    s = tty_run(cols, rows, lang, [W, "-e", "sched:sched_switch", "--by",
                                   "sched:sched_switch:next_comm"], two_frames)
    lines = s.rstrip("\n").split("\n")
    fits = (lines[0].startswith("perfring-watch: loop") and len(lines) <= rows and
            any(line.startswith(" all ") for line in lines) and
            any("sched:sched_switch:next_comm:" in line for line in lines))
    tap.ok(fits and all(len(line) < cols for line in lines),
           f"TTY {cols}x{rows}: both tables on one screen, no line wraps", s)
    blocks = any(ch in s for ch in "\u2588\u2589\u258a\u258b\u258c\u258d\u258e\u258f")
    tap.ok(blocks if lang != "C" else (not blocks and "#" in s and s.isascii()),
           f"TTY {cols}x{rows} ({lang}): {'Unicode' if blocks else 'ASCII'} bars as the "
           "locale allows", s)

if shutil.which("tmux"):
    s = tty_run(100, 30, "C", [W, "-e", "sched:sched_switch", "--by",
                               "sched:sched_switch:prev_comm", "--", "sh", "-c",
                               "printf '\\033[2J' > /proc/self/comm; sleep 1.5"],
                lambda s: "summary:" in s, history=("-S", "-200"))
    tap.ok(s.startswith("perfring-watch: loop") and "\\x1b[2J" in s and "summary:" in s,
           "hostile comm on the TTY: shown escaped, the screen is not cleared", s)
else:
    tap.skip("hostile comm on the TTY", "tmux is not installed")

# One write per frame: the redraw is a single write(2) on the terminal.
if shutil.which("strace") and shutil.which("script"):
    log = box.path("strace")
    box.run(["script", "-qc", f"strace -f -e trace=write -o {log} {W} -d 2.5 "
             "--by sched:sched_switch:next_comm", "/dev/null"], timeout=20)
    writes = [line for line in open(log) if re.search(r"write\(1, \"\\33\[\d+A", line)]
    tap.ok(len(writes) >= 2, "TTY: each redraw is one write", len(writes))
else:
    tap.skip("TTY: each redraw is one write", "strace or script is not installed")

# --top N caps the rows; usage errors are sentences.
rc, out, err = box.run([W, "--by", "sched:sched_switch:next_comm", "--top", "2", "-d", "1.2",
                        "--json"])
tops = [len(o["by"][0]["top"]) for o in json_lines(out) if o.get("type") == "interval"]
tap.ok(rc == 0 and tops and max(tops) <= 2, "--top 2: at most 2 rows an interval", tops)
rc, out, err = box.run([W, "--by", "sched:sched_switch:no_such", "-d", "1"])
tap.ok(rc == 2 and b"has no field 'no_such'" in err, "--by on a missing field: exit 2",
       err.decode())
rc, out, err = box.run([W, "--by", "sched:sched_switch", "-d", "1"])
tap.ok(rc == 2 and b"SYSTEM:NAME:FIELD" in err, "--by without a field: exit 2", err.decode())

# Two --by on two events: each table is bound to its own event and counts.
rc, out, err = box.run([W, "--by", "sched:sched_process_exec:filename", "--by",
                        "syscalls:sys_enter_getpid:common_pid", "--pages", "256", "--json",
                        "--", GETPID, "3000"])
objs = json_lines(out)
start, summary = (objs[0], objs[-1]) if len(objs) >= 2 else ({}, {})
tables = {(b["event"], b["field"]): {r["value"]: r["count"] for r in b["rows"]}
          for b in summary.get("by", [])}
tap.ok(rc == 0 and tables.get(("sched:sched_process_exec", "filename")) == {GETPID: 1} and
       tables.get(("syscalls:sys_enter_getpid", "common_pid")) == {str(start.get("pid")): 3000}
       and b"not watched" not in err,
       "two --by on two events: the exec's filename once and the child's 3,000 getpids",
       tables, err.decode())

# A pointer field: said once on stderr, its values shown as addresses.
PTR = ("the field is a pointer (const char *); its values are addresses in the traced "
       "process, not the string")
rc, out, err = box.run([W, "--by", "syscalls:sys_enter_openat:filename", "--json", "--",
                        "/bin/true"])
objs = json_lines(out)
vals = [r["value"] for r in objs[-1]["by"][0]["rows"]] if objs and objs[-1].get("by") else []
tap.ok(rc == 0 and err.decode().count(f"--by syscalls:sys_enter_openat:filename: {PTR}") == 1
       and vals and all(re.fullmatch(r"0x[0-9a-f]+", v) for v in vals),
       "--by on a pointer field: one warning, the values as 0x addresses", vals[:5],
       err.decode())
rc, out, err = box.run([W, "-e", "syscalls:sys_enter_openat", "--print", "--", "/bin/true"])
lines = [line for line in out.decode().splitlines() if "sys_enter_openat:" in line]
tap.ok(rc == 0 and err.decode().count(f"--print syscalls:sys_enter_openat:filename: {PTR}") == 1
       and lines and all(re.search(r" filename=0x[0-9a-f]+ ", line) for line in lines),
       "--print on a pointer field: one warning, filename=0x... on every line", lines[:3],
       err.decode())


# The --help and man page examples: no --by names a pointer field.
def by_examples(text):
    return set(re.findall(r"--by\s+([a-z0-9_]+:[a-z0-9_]+:[a-z0-9_]+)", text))


def field_type(spec):
    system, name, field = spec.split(":")
    try:
        with open(f"/sys/kernel/tracing/events/{system}/{name}/format") as f:
            for line in f:
                m = re.match(r"\s*field:(.*?)\s*\b" + re.escape(field) + r"(\[\d*\])?;",
                             line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


docs = "".join(subprocess.run([p, "--help"], capture_output=True, text=True).stdout
               for p in (W, prog("tools/perfring-exporter")))
for page in ("tools/watch/perfring-watch.1", "tools/watch/perfring-exporter.1"):
    with open(os.path.join(SRC, page)) as f:
        docs += f.read().replace("\\-", "-")
types = {spec: field_type(spec) for spec in by_examples(docs)}
tap.ok(types and all(t and not t.endswith("*") for t in types.values()),
       "every --by example in --help and the man pages names a field that holds its value",
       types)
tap.done()
