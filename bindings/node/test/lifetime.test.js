// SPDX-License-Identifier: MIT
// A watch's lifetime: close() (twice, inside the callback), unref(), the
// end of a pid watch, throwing callbacks, process exit, and fds.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { spawnSync, spawn } = require('node:child_process');
const perfring = require('perfring');
const { getpids, fdCount, once } = require('./helpers.js');

const own = { events: ['page-faults'], pid: process.pid };

// Runs a script in a child node with this test's environment.
function node(script, timeout = 20000) {
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout });
}

test('close() twice is the same promise, and resolves', async () => {
  const w = perfring.watch(own, () => {});
  const p1 = w.close(), p2 = w.close();
  assert.strictEqual(p1, p2);
  await Promise.all([p1, p2]);
  await w.close();
  assert.ok(Array.isArray(w.stats()) && w.stats().length > 0, 'the last stats stay');
  w.unref();
  w.ref();
});

test('close() inside the callback: no callback after it', async () => {
  const wl = getpids(10000);
  let calls = 0, after = 0, closing = null;
  try {
    await new Promise((resolve, reject) => {
      const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, pages: 256,
                                 watermark: 256 }, () => {
        calls++;
        if (closing) {
          after++;
          return;
        }
        closing = w.close();
        assert.strictEqual(w.close(), closing);
        closing.then(resolve, reject);
      });
      wl.go();
    });
    await wl.exited;
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    wl.cleanup();
  }
  assert.strictEqual(calls, 1);
  assert.strictEqual(after, 0);
});

test('an open watch keeps the process alive; unref() lets it exit', async () => {
  const open = `require('perfring').watch(${JSON.stringify(own).replace(/\d+}$/, 'process.pid}')}, () => {});`;
  const child = spawn(process.execPath, ['-e', open], { stdio: 'ignore' });
  const exited = new Promise((r) => child.on('exit', r));
  const alive = await Promise.race([exited.then(() => false),
                                    new Promise((r) => setTimeout(() => r(true), 700))]);
  child.kill('SIGKILL');
  await exited;
  assert.ok(alive, 'a process with an open watch stayed alive');

  const t0 = Date.now();
  const r = node(`const w = require('perfring').watch({ events: ['page-faults'], pid: process.pid },
                                                     () => {});
                  w.unref(); setTimeout(() => {}, 100);`);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.ok(Date.now() - t0 < 10000);
});

test('process.exit() with an open watch exits cleanly', () => {
  const r = node(`const w = require('perfring').watch({ events: ['page-faults'], pid: process.pid },
                                                     () => {});
                  setTimeout(() => process.exit(7), 50);`);
  assert.strictEqual(r.status, 7, r.stderr);
  assert.strictEqual(r.signal, null);
});

test('100 watch/close cycles leave the fd count where it was', async () => {
  const before = fdCount();
  for (let i = 0; i < 100; i++) {
    const w = perfring.watch(own, () => {});
    if (i % 2)
      w.unref();
    await w.close();
  }
  assert.strictEqual(fdCount(), before);
});

test('HUP: a watch on a child that exits emits \'end\' once and closes itself', async (t) => {
  const wl = getpids(100);
  let n = 0, ends = 0;
  try {
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid },
                             (s) => { n += s.length; });
    w.on('end', () => ends++);
    const ended = once(w, 'end', 20000);
    wl.go();
    await ended;
    assert.strictEqual(n, 100, 'every sample came before the end');
    await w.close();
    const st = w.stats();
    t.diagnostic(`wakeups per ring: ${st.map((c) => c.wakeups)}`);
    assert.ok(st.every((c) => c.hup === 1));
    assert.ok(st.every((c) => c.wakeups < 50), 'no spinning on the HUP');
    await new Promise((r) => setTimeout(r, 50));
    assert.strictEqual(ends, 1);
  } finally {
    wl.cleanup();
  }
});

test('a throwing callback is an uncaughtException; the watch goes on', () => {
  const r = node(`
    const perfring = require('perfring');
    const { getpids, once } = require(${JSON.stringify(require.resolve('./helpers.js'))});
    let thrown = 0, caught = 0, n = 0;
    process.on('uncaughtException', (e) => { if (e.message === 'boom') caught++; });
    const wl = getpids(10000);
    const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: wl.pid, pages: 256,
                               watermark: 256 }, (s) => {
      n += s.length;
      if (thrown < 3) { thrown++; throw new Error('boom'); }
    });
    w.on('end', async () => {
      await w.close();
      wl.cleanup();
      console.log(JSON.stringify({ thrown, caught, n }));
    });
    wl.go();`);
  assert.strictEqual(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.deepStrictEqual(got, { thrown: 3, caught: 3, n: 10000 });
});

test('a throwing callback without a handler ends the process as any throw does', () => {
  const r = node(`
    const w = require('perfring').watch({ events: ['page-faults'], pid: process.pid }, () => {
      throw new Error('unhandled boom');
    });
    setInterval(() => Buffer.alloc(1 << 16).fill(1), 5);`);
  assert.strictEqual(r.status, 1);
  assert.match(r.stderr, /unhandled boom/);
});
