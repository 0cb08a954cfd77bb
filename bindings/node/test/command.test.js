// SPDX-License-Identifier: MIT
// watch({ command }): the addon forks the command stopped, opens the watch
// on the child with enable_on_exec, then lets it exec, so every event from
// its exec on is counted, even of a child that starts at once; `w.exited`
// gives its exit as { code, signal }, 'end' follows the last record, and
// nothing is left behind (fds, children).
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const perfring = require('perfring');
const { fdCount, once } = require('./helpers.js');

const GETPID_N = process.env.PERFRING_GETPID_N;
// A sanitizer build preloads its runtime for node, which calls getpid at
// start-up; the command inherits this environment and must not get it.
const SANITIZED = !!process.env.LD_PRELOAD;
delete process.env.LD_PRELOAD;

const getpid = ['syscalls:sys_enter_getpid'];

// Runs a command watch to its end: the samples, the exit, the stats.
async function run(command, opts = {}) {
  const seen = { n: 0, pids: new Set(), perPid: new Map(), times: [], batches: 0 };
  const { perPid, times, ...watchOpts } = opts;
  const w = perfring.watch({ events: getpid, command, pages: 256, ...watchOpts }, (samples) => {
    seen.batches++;
    seen.n += samples.length;
    for (const s of samples) {
      seen.pids.add(s.pid);
      if (perPid)
        seen.perPid.set(s.pid, (seen.perPid.get(s.pid) ?? 0) + 1);
      if (times)
        seen.times.push([s.time, s.cpu]);
    }
  });
  assert.ok(w.exited instanceof Promise, 'w.exited is a promise');
  assert.ok(Number.isInteger(w.pid) && w.pid > 0, 'w.pid is the command\'s');
  seen.pid = w.pid;
  const ended = once(w, 'end', 20000);
  seen.status = await w.exited;
  await ended;
  await w.close();
  seen.stats = w.stats();
  return seen;
}

test('every getpid call from the exec on: exactly N, at once, with no FIFO', async (t) => {
  const fds = fdCount();
  for (const n of [1, 20000]) {
    const seen = await run([GETPID_N, String(n), '0']);
    t.diagnostic(`${n}: ${seen.n} samples in ${seen.batches} batches`);
    assert.strictEqual(seen.n, n);
    assert.deepStrictEqual([...seen.pids], [seen.pid]);
    assert.deepStrictEqual(seen.status, { code: 0, signal: null });
    assert.strictEqual(seen.stats.reduce((a, c) => a + c.lost, 0), 0);
    assert.strictEqual(seen.stats.reduce((a, c) => a + c.samples, 0), n);
  }
  assert.strictEqual(fdCount(), fds, 'no fd left');
});

test('the exit code and the killing signal', async () => {
  assert.deepStrictEqual((await run([GETPID_N, '10', '7'])).status, { code: 7, signal: null });
  const killed = await run(['sh', '-c', 'kill -KILL $$']);
  assert.deepStrictEqual(killed.status, { code: null, signal: 'SIGKILL' });
  const termed = await run(['sh', '-c', 'kill -TERM $$']);
  assert.deepStrictEqual(termed.status, { code: null, signal: 'SIGTERM' });
});

test('children of the command are counted too, and the watch ends after them', async () => {
  // The shell forks two getpid_n (inherit) and waits for both.
  const seen = await run(['sh', '-c', '"$0" 3000 0 & "$0" 2000 0 & wait', GETPID_N], { perPid: true });
  const kids = [...seen.perPid].filter(([pid]) => pid !== seen.pid).map(([, n]) => n);
  assert.deepStrictEqual(kids.sort((a, b) => a - b), [2000, 3000]);
  assert.deepStrictEqual(seen.status, { code: 0, signal: null });
});

test('exited resolves after close() too, and the child is reaped', async () => {
  const dir = fs.mkdtempSync('/tmp/perfring-node-cmd-');
  const fifo = `${dir}/go`;
  require('node:child_process').execFileSync('mkfifo', [fifo]);
  try {
    let after = 0, closed = false;
    const w = perfring.watch({ events: getpid, command: [GETPID_N, '100', '3', fifo] },
                             () => { if (closed) after++; });
    await w.close();
    closed = true;
    fs.closeSync(fs.openSync(fifo, 'w'));
    assert.deepStrictEqual(await w.exited, { code: 3, signal: null });
    await new Promise((r) => setTimeout(r, 50));
    assert.strictEqual(after, 0, 'no samples after close()');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Node-API frees a promise's napi_deferred only when it is settled, which it
// refuses once JavaScript can no longer run: `exited` still pending at exit
// (an unref'd watch whose command runs on) leaked 8 bytes that way.
const valgrind = ['/usr/bin/valgrind', '/usr/local/bin/valgrind'].find((p) => fs.existsSync(p));
test('an unref\'d command watch leaks nothing at exit, its command still running (valgrind)',
     { skip: (!valgrind && 'needs valgrind') || (SANITIZED && 'a sanitizer build'),
       timeout: 100000 }, async () => {
  const script = `const w = require('perfring').watch({ events: ${JSON.stringify(getpid)},
                                                      command: ['sleep', '1'] }, () => {});
                  console.log(w.pid); w.unref(); setTimeout(() => {}, 100);`;
  const r = require('node:child_process').spawnSync(valgrind, ['-q', '--leak-check=full',
    '--show-leak-kinds=definite,indirect', '--errors-for-leak-kinds=definite,indirect',
    '--error-exitcode=9', process.execPath, '-e', script], { encoding: 'utf8', timeout: 90000 });
  const pid = Number(r.stdout.trim());
  // The command outlives the process by design; this waits for its end.
  for (let i = 0; pid > 0 && fs.existsSync(`/proc/${pid}`) && i < 100; i++)
    await new Promise((res) => setTimeout(res, 50));
  assert.strictEqual(r.status, 0, `valgrind: status ${r.status}\n${r.stderr}`);
  assert.ok(pid > 0, `the command's pid: '${r.stdout}'`);
  assert.doesNotMatch(r.stderr, /definitely lost|indirectly lost/);
});

test('a missing program throws ENOENT naming it; command with pid is EINVAL', async () => {
  const fds = fdCount();
  for (const prog of ['/nonexistent/prog', 'perfring-no-such-program']) {
    let err;
    try {
      perfring.watch({ events: getpid, command: [prog, 'x'] }, () => {});
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error);
    assert.strictEqual(err.code, 'ENOENT', err.message);
    assert.match(err.message, new RegExp(`command '${prog}' could not be run: No such file`));
  }
  const cases = [
    [{ command: ['true'], pid: 1 }, /'command' and 'pid' exclude each other/],
    [{ command: [] }, /'command' must be an array of 1/],
    [{ command: 'true' }, /'command' must be an array/],
    [{ command: [''] }, /'command' must be an array of strings/],
    [{ command: ['true', 1] }, /entry 1 is not/],
    [{ command: ['true', 'a\0b'] }, /without NUL bytes/],
  ];
  for (const [opts, msg] of cases)
    assert.throws(() => perfring.watch({ events: getpid, ...opts }, () => {}),
                  (e) => e.code === 'EINVAL' && msg.test(e.message));
  // A watch that fails after the fork (an unknown event) never runs the
  // command and reaps it.
  assert.throws(() => perfring.watch({ events: ['syscalls:no_such_event'],
                                       command: [GETPID_N, '1'] }, () => {}),
                (e) => e.code === 'ENOENT');
  // A watch that failed once attached closes its handles on the loop.
  await new Promise((r) => setTimeout(r, 20));
  assert.strictEqual(fdCount(), fds, 'no fd left');
  // No child left: every zombie would be ours.
  const kids = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim();
  assert.strictEqual(kids, '', `children left: ${kids}`);
});
