// SPDX-License-Identifier: MIT
// Exact delivery: a child makes exactly 10,000 getpid calls; the watch on its
// pid hands over exactly 10,000 samples, all its own, while the loop's
// timers go on running.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const perfring = require('perfring');
const { getpids, once } = require('./helpers.js');

const N = 10000;

// Watches the child's getpid calls until 'end'; returns what was seen.
async function run(opts, hooks = {}) {
  const wl = getpids(N);
  const seen = { n: 0, batches: 0, foreign: 0, badTime: 0, events: new Set() };
  try {
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, ...opts },
                             (samples) => {
      assert.ok(Array.isArray(samples) && samples.length > 0);
      seen.batches++;
      seen.n += samples.length;
      for (const s of samples) {
        if (s.pid !== wl.pid || s.tid !== wl.pid)
          seen.foreign++;
        if (typeof s.time !== 'bigint' || s.time <= 0n)
          seen.badTime++;
        seen.events.add(s.event);
      }
      hooks.batch?.(samples);
    });
    const ended = once(w, 'end', 20000);
    wl.go();
    await ended;
    hooks.end?.();
    await w.close();
    seen.stats = w.stats();
    seen.status = await wl.exited;
  } finally {
    wl.cleanup();
  }
  return seen;
}

test('exactly 10,000 getpid samples, each with the child\'s pid (4 KiB watermark)', async (t) => {
  const seen = await run({ pages: 256 });
  t.diagnostic(`${seen.n} samples in ${seen.batches} batches`);
  assert.strictEqual(seen.status, 0);
  assert.strictEqual(seen.n, N);
  assert.strictEqual(seen.foreign, 0);
  assert.strictEqual(seen.badTime, 0);
  assert.deepStrictEqual([...seen.events], ['syscalls:sys_enter_getpid']);
  assert.strictEqual(seen.stats.reduce((a, c) => a + c.samples, 0), N);
  assert.strictEqual(seen.stats.reduce((a, c) => a + c.lost, 0), 0);
  // One array per loop iteration that read records, never one per record.
  assert.ok(seen.batches < N / 10, `${seen.batches} batches`);
});

test('a setInterval(1 ms) keeps firing while the samples arrive', async (t) => {
  // A 1-byte watermark wakes the loop at every record; each wakeup costs the
  // traced task an interrupt, so the stream lasts some 100 ms whatever the
  // consumer's speed, and the timer must run between the batches.
  let ticks = 0, during = 0, streaming = false;
  const iv = setInterval(() => {
    ticks++;
    if (streaming)
      during++;
  }, 1);
  try {
    const seen = await run({ pages: 256, watermark: 1 },
                           { batch: () => { streaming = true; }, end: () => { streaming = false; } });
    t.diagnostic(`${during} ticks during the stream, ${seen.batches} batches`);
    assert.strictEqual(seen.n, N);
    assert.ok(during >= 10, `the interval fired ${during} times during the stream (${ticks} in all, ` +
              `${seen.batches} batches)`);
  } finally {
    clearInterval(iv);
  }
});
