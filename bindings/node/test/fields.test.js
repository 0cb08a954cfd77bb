// SPDX-License-Identifier: MIT
// Tracepoint fields decoded from the tracefs format: signal:signal_generate
// for 100 signals a shell sends itself.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const perfring = require('perfring');
const { workload, once } = require('./helpers.js');

const N = 100;
const SIGUSR1 = 10;

test('signal:signal_generate gives sig as a number and comm as a string', async (t) => {
  const script = `trap : USR1; read x < "$1"; i=0; while [ $i -lt ${N} ]; do kill -USR1 $$; i=$((i+1)); done`;
  const wl = workload(['sh', '-c', script, 'sh', '$FIFO']);
  const usr1 = [], other = [];
  try {
    const w = perfring.watch({ events: ['signal:signal_generate'], pid: wl.pid }, (samples) => {
      for (const s of samples)
        (s.fields.sig === SIGUSR1 ? usr1 : other).push(s);
    });
    const ended = once(w, 'end', 20000);
    wl.go();
    await ended;
    await w.close();
    assert.strictEqual(await wl.exited, 0);
  } finally {
    wl.cleanup();
  }
  t.diagnostic(`${usr1.length} SIGUSR1, other signals: ${other.map((s) => s.fields.sig)}`);
  assert.strictEqual(usr1.length, N);
  for (const s of usr1) {
    assert.strictEqual(s.event, 'signal:signal_generate');
    assert.strictEqual(typeof s.fields.sig, 'number');
    assert.strictEqual(s.fields.comm, 'sh');
    assert.strictEqual(s.fields.pid, wl.pid);
    assert.strictEqual(s.fields.code, 0); // SI_USER: kill(2)
    assert.strictEqual(typeof s.fields.result, 'number');
    assert.ok(!Object.keys(s.fields).some((k) => k.startsWith('common_')));
  }
  // The shell's own exit signals its parent (SIGCHLD), and nothing else.
  for (const s of other)
    assert.strictEqual(s.fields.sig, 17);
});

test('8-byte fields are BigInts, arrays are Arrays', async () => {
  // raw_syscalls:sys_enter has `long id` and `unsigned long args[6]`.
  const got = [];
  const w = perfring.watch({ events: ['raw_syscalls:sys_enter'], pid: process.pid },
                           (samples) => got.push(...samples));
  await new Promise((r) => setTimeout(r, 150));
  await w.close();
  assert.ok(got.length > 0);
  const f = got[0].fields;
  assert.strictEqual(typeof f.id, 'bigint');
  assert.ok(Array.isArray(f.args) && f.args.length === 6, JSON.stringify(Object.keys(f)));
  assert.ok(f.args.every((a) => typeof a === 'bigint'));
});
