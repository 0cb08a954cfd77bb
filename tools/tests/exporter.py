# SPDX-License-Identifier: MIT
"""perfring-exporter end to end (TAP, run by tools/tests/test_exporter.sh as
root): the page parses strictly, a real Prometheus server scrapes it and reads an
exact count, hostile clients neither stall collection nor grow memory, hostile
comms stay escaped, and SIGTERM answers the scrape in flight and exits 0."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from watchlib import Sandbox, Tap, need_root, prog, wait_for

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    text_string_to_metric_families = None

X = prog("tools/perfring-exporter")
W = prog("tools/perfring-watch")
GETPID = prog("tests/getpid_n")
TASKNAME = prog("tools/tests/taskname")
FAMILIES = ("perfring_samples", "perfring_records", "perfring_bytes", "perfring_lost",
            "perfring_wakeups", "perfring_ring_fill_max_ratio",
            "perfring_delivery_latency_seconds", "perfring_samples_by_field")

tap = Tap(24)
need_root(tap)
if text_string_to_metric_families is None:
    print("# SKIP: Debian's python3-prometheus-client is not installed (scripts/dev installs it)")
    tap.skip_rest("no prometheus_client")
    tap.done()
if not shutil.which("pgrep"):
    print("Bail out! pgrep (procps) is not installed: the leftover-process check needs it "
          "(scripts/dev installs procps)", flush=True)
    sys.exit(1)
box = Sandbox("test_exporter")


def free_port(family=socket.AF_INET, host="127.0.0.1"):
    with socket.socket(family) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def get(port, path="/metrics", timeout=5, host="127.0.0.1"):
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, "", ""
    except OSError as e:
        return None, "", str(e)


def parse(page):
    """The families and every series (name, labels); raises on a bad page."""
    fams = list(text_string_to_metric_families(page))
    series = [(s.name, tuple(sorted(s.labels.items()))) for f in fams for s in f.samples]
    return fams, series


def series_value(page, name, **labels):
    for f in text_string_to_metric_families(page):
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def start_exporter(*args):
    port = free_port()
    p = box.start([X, "--listen", f"127.0.0.1:{port}", *args])
    up = wait_for(lambda: get(port, timeout=1)[0] == 200 or p.poll() is not None, 10)
    return p, port, bool(up) and p.poll() is None


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


# Format: the page parses strictly, every family has HELP and TYPE, no
# series twice; promtool agrees.
x, port, up = start_exporter("--by", "sched:sched_switch:next_comm")
status, ctype, page = get(port) if up else (None, "", "")
try:
    fams, series = parse(page)
    parsed = True
except Exception as e:  # noqa: BLE001 (the parser's error is the diagnostic)
    fams, series, parsed = [], [], e
names = {f.name for f in fams}
tap.ok(up and status == 200 and ctype.startswith("text/plain; version=0.0.4") and parsed is True,
       "GET /metrics: 200, text format 0.0.4, parses with prometheus_client", status, ctype,
       parsed, page[:400])
tap.ok(all(n in names for n in FAMILIES) and
       all(f"# HELP {n}" in page and f"# TYPE {n}" in page for n in names),
       "every family is there with # HELP and # TYPE", sorted(names))
tap.ok(series and len(series) == len(set(series)), "no series appears twice", len(series))
if shutil.which("promtool"):
    pt = subprocess.run(["promtool", "check", "metrics"], input=page, capture_output=True,
                        text=True, timeout=20)
    tap.ok(pt.returncode == 0, "promtool check metrics accepts the page", pt.stdout, pt.stderr)
else:
    tap.skip("promtool check metrics", "promtool (Debian's prometheus) is not installed")
buckets = [s for f in fams if f.name == "perfring_delivery_latency_seconds" for s in f.samples
           if s.name.endswith("_bucket")]
les = [s.labels["le"] for s in buckets]
tap.ok(les[0] == "1e-05" and les[-2] == "10" and les[-1] == "+Inf" and len(les) == 20,
       "latency histogram: fixed buckets from 10 us to 10 s, and +Inf", les)
codes = (get(port, "/")[0], get(port, "/metricsx")[0], get(port, "/../metrics")[0])
tap.ok(codes[0] == 404 and codes[1] == 404, "any other path is 404", codes)
rc, out, err = box.stop(x)
tap.ok(rc == 0, "SIGTERM: exit 0", rc, err.decode())

# Exact through a real Prometheus: 5,000 getpid calls from a known pid.
def prometheus_exact():
    go = box.path("go")
    os.mkfifo(go)
    gen = box.start([GETPID, "5000", "0", go])
    x, port, up = start_exporter("--by", "syscalls:sys_enter_getpid:common_pid", "--pages", "256")
    pport = free_port()
    cfg = box.path("prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: perfring\n"
                f"    static_configs: [{{ targets: ['127.0.0.1:{port}'] }}]\n")
    prom = box.start(["prometheus", f"--config.file={cfg}",
                      f"--storage.tsdb.path={box.path('tsdb')}",
                      f"--web.listen-address=127.0.0.1:{pport}"],
                     stdout=subprocess.DEVNULL, stderr=open(box.path("prom.log"), "w"))
    with open(go, "w") as f:
        f.write("go")
    gen.wait(timeout=10)
    q = urllib.parse.urlencode({"query": "perfring_samples_by_field_total{field=\"common_pid\","
                                f"value=\"{gen.pid}\"}}"})

    def read():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{pport}/api/v1/query?{q}",
                                        timeout=2) as r:
                res = json.load(r)["data"]["result"]
                return res and float(res[0]["value"][1]) == 5000 and res[0]["value"][1]
        except (OSError, ValueError, KeyError):
            return None
    got = wait_for(read, 20, step=0.5)
    prc = box.stop(prom)[0]
    xrc = box.stop(x)[0]
    return up, got, prc, xrc, open(box.path("prom.log")).read()[-1500:]


if shutil.which("prometheus"):
    up, got, prc, xrc, log = prometheus_exact()
    tap.ok(up and got == "5000", "a real Prometheus reads perfring_samples_by_field_total "
           "for the pid as exactly 5,000", got, log)
    tap.ok(prc == 0 and xrc == 0, "Prometheus and the exporter stop cleanly", prc, xrc)
else:
    tap.skip("a real Prometheus reads 5,000", "prometheus is not installed")
    tap.skip("Prometheus stops", "prometheus is not installed")
shutil.rmtree(box.path("tsdb"), ignore_errors=True)


# Hostile clients, under a moderate load that must lose nothing.
def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def closed_within(s, secs):
    """True when the server closes (or resets) s within secs."""
    s.settimeout(secs)
    try:
        while s.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


# 1024 pages (64 ms of this load): the exporter answers a burst of 64
# scrapes in one loop turn, which in a sanitizer build outlasts 256 pages.
x, port, up = start_exporter("-e", "syscalls:sys_enter_getpid", "--by",
                             "syscalls:sys_enter_getpid:common_pid", "--pages", "1024")
load = box.start([GETPID, "300000"])
flood = [connect(port) for _ in range(200)]
for s in flood:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
answers = []
for s in flood:
    s.settimeout(5)
    try:
        answers.append(s.recv(64)[:12])
    except OSError:
        answers.append(b"")
ok200 = sum(a.startswith(b"HTTP/1.1 200") for a in answers)
refused = sum(a.startswith(b"HTTP/1.1 503") or a == b"" for a in answers)
for s in flood:
    s.close()
tap.ok(up and ok200 >= 1 and ok200 <= 64 and ok200 + refused == 200,
       "200 connections at once: at most 64 served, the rest refused", ok200, refused)

slow = connect(port)
slow.sendall(b"G")
t0 = time.monotonic()
dripped = 0
slow.settimeout(1)
while time.monotonic() - t0 < 8:
    try:
        slow.sendall(b"E")
        dripped += 1
        if slow.recv(1) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
cut_after = time.monotonic() - t0
scrape_meanwhile = get(port)[0]
tap.ok(cut_after < 7.5 and scrape_meanwhile == 200,
       "a client sending a byte a second is cut within its deadline; others are served",
       cut_after, dripped, scrape_meanwhile)
slow.close()

big = connect(port)
try:
    big.sendall(b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
    reply = big.recv(64)
except OSError:
    reply = b""
big.close()
tap.ok((reply.startswith(b"HTTP/1.1 4") or reply == b"") and get(port)[0] == 200,
       "a 1 MiB header is refused, and the exporter goes on", reply)

deaf = connect(port)
deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
try:
    deaf.settimeout(3)
    for _ in range(2000):
        deaf.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
except OSError:
    pass
time.sleep(1)
served = get(port)[0]
hwm = vm_hwm_kib(x.pid)
tap.ok(served == 200 and hwm < 64 * 1024,
       "a client that reads nothing: others are served, VmHWM stays under 64 MiB", served,
       f"{hwm} KiB")
deaf.close()
load.wait(timeout=30)
time.sleep(0.5)
status, _, page = get(port)
n = series_value(page, "perfring_samples_by_field_total", value=str(load.pid)) if page else None
lost = sum(s.value for f in text_string_to_metric_families(page) for s in f.samples
           if s.name == "perfring_lost_total") if page else None
tap.ok(n == 300000 and lost == 0, "collection kept up: all 300,000 load samples, 0 lost",
       n, lost)
hwm = vm_hwm_kib(x.pid)
rc, out, err = box.stop(x)
tap.ok(hwm < 64 * 1024 and rc == 0,
       "after every hostile client: VmHWM under 64 MiB, alive, and SIGTERM exits 0",
       f"{hwm} KiB", rc, err.decode())

# Escaping: a comm holding a quote and a backslash, under --by next_comm.
x, port, up = start_exporter("--by", "sched:sched_switch:next_comm")
# Its switch reaches the page at a flush (100 ms), later in a sanitizer
# build; a run whose switch in was missed is made again, up to 5 times.
value = None
for attempt in range(5):
    box.run([TASKNAME, "1", 'q"b\\s', "0"])
    for _ in range(10):
        time.sleep(0.2)
        status, _, page = get(port)
        try:
            value = series_value(page, "perfring_samples_by_field_total", value='q"b\\\\s')
        except Exception as e:  # noqa: BLE001
            value = e
        if isinstance(value, float) and value >= 1:
            break
    if isinstance(value, float) and value >= 1:
        break
tap.ok(isinstance(value, float) and value >= 1,
       "a comm with \" and \\ is exported escaped and the page parses", value,
       [line for line in page.splitlines() if "q\\\"" in line])
box.stop(x)

# Shutdown: SIGTERM while a scrape is half sent; it is answered, exit 0.
x, port, up = start_exporter()
s = connect(port)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
time.sleep(0.2)
x.send_signal(signal.SIGTERM)
time.sleep(0.3)
refused_new = get(port, timeout=1)[0] is None
s.sendall(b"\r\n")
s.settimeout(5)
reply = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
        m = re.search(rb"Content-Length: (\d+)\r\n\r\n", reply)
        if m and len(reply) - m.end() >= int(m.group(1)):
            break
except OSError:
    pass
s.close()
head, _, body = reply.partition(b"\r\n\r\n")
m = re.search(rb"Content-Length: (\d+)", head)
rc, out, err = box.stop(x, timeout=5)
tap.ok(head.startswith(b"HTTP/1.1 200") and m and len(body) == int(m.group(1)) and
       b"perfring_samples_total" in body, "SIGTERM during a scrape: the scrape is answered whole",
       head[:200])
tap.ok(rc == 0 and refused_new, "then exit 0, with new connections refused", rc, refused_new,
       err.decode())
leftover = subprocess.run(["pgrep", "-f", X], capture_output=True, text=True).stdout.split()
tap.ok(not [p for p in leftover if int(p) in {q.pid for q in box.procs}],
       "no exporter process is left", leftover)

# perfring-watch --listen: the same page beside its table.
port = free_port()
wp = box.start([W, "--listen", f"127.0.0.1:{port}", "-d", "2.5"])
up = wait_for(lambda: get(port, timeout=1)[0] == 200, 5)
status, _, page = get(port)
rc, out, err = box.stop(wp, signal.SIGCONT, timeout=10)
try:
    parse(page)
    good = "perfring_samples_total" in page
except Exception:  # noqa: BLE001
    good = False
tap.ok(up and good and rc == 0 and b"summary:" in out,
       "perfring-watch --listen serves the same page beside its table", rc, err.decode())


# Two --by on two events: each family is bound to its own event and counts.
def two_by():
    go = box.path("go2")
    os.mkfifo(go)
    x, port, up = start_exporter("--by", "sched:sched_process_exec:filename", "--by",
                                 "syscalls:sys_enter_getpid:common_pid", "--pages", "256")
    gen = box.start([GETPID, "2000", "0", go])
    with open(go, "w") as f:
        f.write("go")
    gen.wait(timeout=10)

    def both():
        page = get(port)[2]
        got = (series_value(page, "perfring_samples_by_field_total", field="filename",
                            value=GETPID),
               series_value(page, "perfring_samples_by_field_total", field="common_pid",
                            value=str(gen.pid)))
        return got if got == (1, 2000) else None
    got = wait_for(both, 5, step=0.2) if up else None
    page = get(port)[2]
    rc, out, err = box.stop(x)
    return up, got, rc, err.decode(), [line for line in page.splitlines()
                                        if line.startswith("perfring_samples_by_field")][:6]


up, got, rc, err, lines = two_by()
tap.ok(up and got == (1, 2000) and rc == 0 and "not watched" not in err,
       "two --by on two events: the exec's filename once and the pid's 2,000 getpids, "
       "both families on the page", got, rc, err, lines)


# HEAD has no body and says the GET's length; the GET after it on the same
# keep-alive connection parses. A sleeping -p target keeps the page still.
def read_response(s, head):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None, b"", buf
        buf += chunk
    hdr, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"\r\nContent-Length: (\d+)", hdr, re.I)
    want = 0 if head or not m else int(m.group(1))
    while len(rest) < want:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return hdr, m and int(m.group(1)), rest[want:] if head else rest


sleeper = box.start(["sleep", "60"])
x, port, up = start_exporter("-s", "page-faults", "-p", str(sleeper.pid))
hd = gh = None
body = extra = b""
try:
    s = connect(port)
    s.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    hd, hlen, extra = read_response(s, True)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    s.settimeout(2)
    gh, glen, body = read_response(s, False)
    s.close()
except OSError as e:
    extra = str(e).encode()
try:
    parse(body.decode())
    parsed = True
except Exception as e:  # noqa: BLE001
    parsed = e
tap.ok(hd is not None and hd.startswith(b"HTTP/1.1 200") and hlen == len(body) and
       extra == b"" and gh is not None and gh.startswith(b"HTTP/1.1 200") and
       glen == len(body) and parsed is True,
       "HEAD /metrics: Content-Length of the GET's body and no body; the GET after it on "
       "the same connection parses", hd, gh, extra[:200], parsed)
box.stop(x)
box.stop(sleeper)


# --listen [IPV6]:PORT, scraped over IPv6; unbracketed or bad forms are usage errors.
def has_lo6():
    try:
        with open("/proc/net/if_inet6") as f:
            return any(line.split()[0] == "0" * 31 + "1" and line.split()[-1] == "lo"
                       for line in f)
    except OSError:
        return False


if has_lo6():
    port = free_port(socket.AF_INET6, "::1")
    x6 = box.start([X, "--listen", f"[::1]:{port}"])
    up = wait_for(lambda: get(port, timeout=1, host="[::1]")[0] == 200 or
                  x6.poll() is not None, 10)
    status, ctype, page = get(port, host="[::1]")
    rc, out, err = box.stop(x6)
    try:
        good = bool(parse(page)[0])
    except Exception:  # noqa: BLE001
        good = False
    tap.ok(up and status == 200 and good and rc == 0,
           "--listen [::1]:PORT serves /metrics over IPv6", status, rc, err.decode())
else:
    tap.skip("--listen [::1]:PORT over IPv6", "lo has no ::1 (/proc/net/if_inet6)")
bad = {}
for prog_ in (X, W):
    for form in ("::1:9464", "[::1]", "[::1:9464", "[::zz]:9464", "[]:9464"):
        rc, out, err = box.run([prog_, "--listen", form, "-d", "1"], timeout=10)
        if rc != 2 or b"--listen " + form.encode() not in err:
            bad[(os.path.basename(prog_), form)] = (rc, err.decode()[-200:])
tap.ok(not bad, "--listen: an unbracketed or bad IPv6 address is exit 2 with a sentence, "
       "in both programs", bad)
tap.done()
