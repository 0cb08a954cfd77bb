// SPDX-License-Identifier: MIT
// CPU hotplug, simulated: the library's test-only sysfs root
// (PERFRING_TEST_SYSFS, docs/HOTPLUG.md), whose online list this test writes
// while the real CPU stays online. A watch without `cpus` reads it again at
// each flush on Node's loop: the CPU's ring closes and reopens, and then
// every getpid of a child is delivered.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork, execFileSync } = require('node:child_process');
const perfring = require('perfring');
const { getpids, once, fdCount } = require('./helpers.js');

const N = 2000;

function cpuList(text) {
  const cpus = [];
  for (const part of text.trim().split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++)
      cpus.push(c);
  }
  return cpus;
}

// Resolves once cond() holds, checked every 5 ms; rejects after ms.
function until(cond, ms, what) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      if (cond())
        return resolve();
      if (Date.now() - t0 > ms)
        return reject(new Error(`${what}: not within ${ms} ms`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

// A test-only sysfs root holding this machine's possible and online lists;
// cpu is the one that leaves (the last online), setOnline rewrites the list.
function fakeSysfs() {
  const sys = '/sys/devices/system/cpu';
  const online = fs.readFileSync(`${sys}/online`, 'utf8');
  const real = cpuList(online);
  assert.ok(real.length >= 2, 'needs two online CPUs (one leaves, one stays)');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'perfring-node-hotplug-'));
  const dir = path.join(root, 'devices/system/cpu');
  fs.mkdirSync(dir, { recursive: true });
  // Read and written, not copied: sysfs files claim 4096 bytes, and libuv's
  // sendfile copy spins on them.
  fs.writeFileSync(path.join(dir, 'possible'), fs.readFileSync(`${sys}/possible`, 'utf8'));
  fs.writeFileSync(path.join(dir, 'online'), online);
  const setOnline = (cpus) => fs.writeFileSync(path.join(dir, 'online'), cpus.join(',') + '\n');
  return { real, cpu: real[real.length - 1], root, setOnline };
}

test('without cpus, a watch follows a CPU that leaves and comes back', async () => {
  const { real, cpu, root, setOnline } = fakeSysfs();
  process.env.PERFRING_TEST_SYSFS = root;
  const wl = getpids(N);
  let n = 0;
  try {
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, flushMs: 10 },
                             (samples) => { n += samples.length; });
    const listed = () => w.stats().map((s) => s.cpu);
    assert.deepStrictEqual(listed(), real);
    const fdsOn = fdCount();
    setOnline(real.filter((c) => c !== cpu));
    await until(() => !listed().includes(cpu), 5000, `CPU ${cpu} leaving`);
    assert.ok(fdCount() < fdsOn, `its fds close: ${fdCount()} of ${fdsOn}`);
    setOnline(real);
    await until(() => listed().includes(cpu), 5000, `CPU ${cpu} coming back`);
    assert.strictEqual(fdCount(), fdsOn, 'its fds are back');
    const ended = once(w, 'end', 20000);
    wl.go();
    await ended;
    await w.close();
    assert.strictEqual(await wl.exited, 0);
    assert.strictEqual(n, N);
    assert.strictEqual(w.stats().reduce((a, s) => a + s.samples, 0), N);
    assert.strictEqual(w.stats().reduce((a, s) => a + s.lost, 0), 0);
  } finally {
    wl.cleanup();
    delete process.env.PERFRING_TEST_SYSFS;
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('with cpus, the list is fixed: no CPU is followed', async () => {
  const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], cpus: [0] }, () => {});
  assert.deepStrictEqual(w.stats().map((s) => s.cpu), [0]);
  await w.close();
});

// The child's messages, awaited one kind at a time.
function inbox(child) {
  const got = [];
  let wake = null;
  child.on('message', (m) => {
    got.push(m);
    if (wake)
      wake();
  });
  return (key, ms) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no '${key}' from the child within ${ms} ms`)), ms);
    const look = () => {
      const i = got.findIndex((m) => key in m);
      if (i < 0)
        return;
      clearTimeout(t);
      wake = null;
      resolve(got.splice(i, 1)[0][key]);
    };
    wake = look;
    look();
  });
}

// No fault can be injected from JavaScript, so the limit is real: once the
// CPU has left, the child may have one fd number more than it holds, the
// online list's read takes it and gives it back, and the second of the
// returning CPU's perf_event_opens fails with EMFILE.
test('a CPU that comes back but fails to open is an \'error\' with its cpu, once', async () => {
  const { real, cpu, root, setOnline } = fakeSysfs();
  const child = fork(path.join(__dirname, 'hotplug-child.js'), [],
                     { env: { ...process.env, PERFRING_TEST_SYSFS: root } });
  const from = inbox(child);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const ask = async (what, key) => {
    child.send(what);
    return from(key, 5000);
  };
  const listed = async () => ask('cpus', 'cpus');
  const waitListed = async (want, what) => {
    const t0 = Date.now();
    while ((await listed()).includes(cpu) !== want) {
      if (Date.now() - t0 > 5000)
        throw new Error(`${what}: not within 5000 ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const limit = (soft) => execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${soft}:`]);
  const soft = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '-o', 'SOFT',
                                        '--noheadings']).toString().trim();
  try {
    await from('ready', 10000);
    assert.deepStrictEqual(await listed(), real);
    setOnline(real.filter((c) => c !== cpu));
    await waitListed(false, `CPU ${cpu} leaving`);
    const fd = await ask('fd', 'fd');
    limit(fd + 1);
    setOnline(real);
    const err = await from('error', 5000);
    limit(soft);
    assert.strictEqual(err.isError, true);
    assert.strictEqual(err.code, 'EMFILE', err.message);
    assert.strictEqual(err.cpu, cpu);
    assert.match(err.message, new RegExp(`CPU ${cpu}\\b.*RLIMIT_NOFILE`));
    assert.deepStrictEqual(await listed(), real.filter((c) => c !== cpu), 'it is not watched');
    // Reported once; once it has left and come back, it opens again.
    await new Promise((r) => setTimeout(r, 200));
    setOnline(real.filter((c) => c !== cpu));
    await new Promise((r) => setTimeout(r, 200));
    setOnline(real);
    await waitListed(true, `CPU ${cpu} coming back with fds to spare`);
    child.send('errors');
    assert.strictEqual(await from('errors', 5000), 0, 'no other \'error\' came');
    child.send('close');
    assert.strictEqual(await exited, 0);
  } finally {
    if (child.exitCode === null && child.signalCode === null)
      child.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  }
});
