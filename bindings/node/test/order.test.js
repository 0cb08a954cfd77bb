// SPDX-License-Identifier: MIT
// orderWindowMs: with a window, records of every CPU arrive in time order
// (across batches too); without one, the adapter delivers CPU by CPU, and
// two CPUs writing at once give records older than ones already delivered.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const os = require('node:os');
const perfring = require('perfring');
const { once } = require('./helpers.js');

const GETPID_N = process.env.PERFRING_GETPID_N;
delete process.env.LD_PRELOAD; // see command.test.js
const N = 20000;
// 512 pages hold 32,767 getpid records: a child's 20,000 never overflow the
// ring, whatever the window keeps in it while the loop is slow.

test('orderWindowMs: two CPUs\' getpid streams arrive in time order', async (t) => {
  if (os.availableParallelism?.() < 2 || os.cpus().length < 2) {
    t.skip('needs two CPUs');
    return;
  }
  let prev = 0n, backwards = 0;
  const perPid = new Map(), cpus = new Set();
  const w = perfring.watch({
    events: ['syscalls:sys_enter_getpid'], pages: 512, orderWindowMs: 10,
    command: ['sh', '-c', `taskset -c 0 "$0" ${N} 0 & taskset -c 1 "$0" ${N} 0 & wait`, GETPID_N],
  }, (samples) => {
    for (const s of samples) {
      if (s.time < prev)
        backwards++;
      prev = s.time;
      cpus.add(s.cpu);
      perPid.set(s.pid, (perPid.get(s.pid) ?? 0) + 1);
    }
  });
  const ended = once(w, 'end', 20000);
  assert.deepStrictEqual(await w.exited, { code: 0, signal: null });
  await ended;
  await w.close();
  const kids = [...perPid].filter(([pid]) => pid !== w.pid).map(([, n]) => n);
  assert.deepStrictEqual(kids, [N, N]);
  assert.ok(cpus.has(0) && cpus.has(1), `CPUs ${[...cpus]}`);
  assert.strictEqual(backwards, 0, 'no sample older than one delivered before it');
  assert.strictEqual(w.stats().reduce((a, c) => a + c.late, 0), 0);
});
