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

test('without cpus, a watch follows a CPU that leaves and comes back', async () => {
  const sys = '/sys/devices/system/cpu';
  const online = fs.readFileSync(`${sys}/online`, 'utf8');
  const real = cpuList(online);
  assert.ok(real.length >= 2, 'needs two online CPUs (one leaves, one stays)');
  const cpu = real[real.length - 1];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'perfring-node-hotplug-'));
  const dir = path.join(root, 'devices/system/cpu');
  fs.mkdirSync(dir, { recursive: true });
  // Read and written, not copied: sysfs files claim 4096 bytes, and libuv's
  // sendfile copy spins on them.
  fs.writeFileSync(path.join(dir, 'possible'), fs.readFileSync(`${sys}/possible`, 'utf8'));
  fs.writeFileSync(path.join(dir, 'online'), online);
  process.env.PERFRING_TEST_SYSFS = root;
  const wl = getpids(N);
  let n = 0;
  try {
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, flushMs: 10 },
                             (samples) => { n += samples.length; });
    const listed = () => w.stats().map((s) => s.cpu);
    assert.deepStrictEqual(listed(), real);
    const fdsOn = fdCount();
    fs.writeFileSync(path.join(dir, 'online'), real.filter((c) => c !== cpu).join(',') + '\n');
    await until(() => !listed().includes(cpu), 5000, `CPU ${cpu} leaving`);
    assert.ok(fdCount() < fdsOn, `its fds close: ${fdCount()} of ${fdsOn}`);
    fs.writeFileSync(path.join(dir, 'online'), online);
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
