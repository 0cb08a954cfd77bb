// SPDX-License-Identifier: MIT
// Samples are read from their batch's bytes when asked for: each property
// is right, fields are decoded once and kept, and a sample kept past its
// callback (and past close()) still reads its own bytes, not a later batch's.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { inspect } = require('node:util');
const perfring = require('perfring');
const { getpids, once } = require('./helpers.js');

const GETPID_NR = { x64: 39, arm64: 172, riscv64: 172 };

test('a kept sample reads its own batch, fields once, time as a BigInt', async () => {
  // 20,000 records (64 bytes each) do not fit a 256-page ring: more than
  // one batch, however slow the loop.
  const wl = getpids(20000);
  const kept = [], batches = [];
  let t0, t1;
  try {
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, pages: 256,
                               watermark: 512 }, (samples) => {
      assert.ok(Array.isArray(samples));
      assert.ok(samples.every((s) => s instanceof perfring.Sample));
      // What the sample says now, to compare with what it says later.
      batches.push(samples.map((s) => [s.pid, s.tid, s.cpu, s.time]));
      kept.push(samples);
    });
    const ended = once(w, 'end', 20000);
    t0 = process.hrtime.bigint(); // CLOCK_MONOTONIC, as the samples' time
    wl.go();
    await ended;
    t1 = process.hrtime.bigint();
    await w.close();
  } finally {
    wl.cleanup();
  }
  assert.ok(batches.length > 1, `${batches.length} batches`);
  let n = 0;
  for (let b = 0; b < kept.length; b++) {
    for (let i = 0; i < kept[b].length; i++) {
      const s = kept[b][i];
      assert.deepStrictEqual([s.pid, s.tid, s.cpu, s.time], batches[b][i]);
      assert.strictEqual(s.pid, wl.pid);
      assert.strictEqual(typeof s.time, 'bigint');
      assert.ok(s.time > t0 && s.time < t1, `${s.time} within the run (${t0}-${t1})`);
      assert.strictEqual(s.event, 'syscalls:sys_enter_getpid');
      const f = s.fields;
      assert.strictEqual(f, s.fields, 'decoded once, then kept');
      assert.deepStrictEqual(Object.keys(f), ['__syscall_nr']);
      assert.strictEqual(f.__syscall_nr, GETPID_NR[process.arch] ?? kept[0][0].fields.__syscall_nr);
      n++;
    }
  }
  assert.strictEqual(n, 20000);
  const s = kept[0][0];
  assert.deepStrictEqual(s.toObject(), { event: s.event, cpu: s.cpu, pid: s.pid, tid: s.tid,
                                         time: s.time, fields: s.fields });
  assert.match(inspect(s), /^Sample \{\s+event: 'syscalls:sys_enter_getpid',\s+cpu: \d+,\s+pid: \d+/);
});
