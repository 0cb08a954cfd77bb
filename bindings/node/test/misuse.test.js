// SPDX-License-Identifier: MIT
// Misuse of every native entry and of perfring.watch(): whatever the wrong
// argument, the addon throws an Error whose code is a non-empty string, and
// never lets V8's own codeless TypeError through (issue 31: stats(null)).
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const perfring = require('perfring');
const native = require('perfring/perfring.node');

const noop = () => {};
const wrong = [undefined, null, 0, -1, 1.5, NaN, 'x', '', true, Symbol('s'), 10n, {}, [],
               noop, new Proxy({}, {}), Object.create(null), new Date(0), /re/];
const handleFns = ['stats', 'close', 'ref', 'unref', 'fields', 'events', 'layouts', 'exited', 'pid', '_diagnostics'];

function codeOf(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

function label(v) {
  return typeof v === 'symbol' || v === null || typeof v !== 'object' ? `${typeof v} ${String(v)}`
    : `${v.constructor ? v.constructor.name : 'null-proto'} object`;
}

test('every misuse throws an Error with a code', async () => {
  const calls = [];
  for (const f of handleFns) {
    calls.push([`${f}()`, () => native[f]()]);
    for (const v of wrong)
      calls.push([`${f}(${label(v)})`, () => native[f](v)]);
  }
  // Another object, even another watch's options, is no handle.
  calls.push(['stats(a Watch, not its handle)', () => native.stats(perfring)]);
  calls.push(['watch()', () => native.watch()]);
  for (const v of wrong) {
    calls.push([`watch(${label(v)}, fn, fn)`, () => native.watch(v, noop, noop)]);
    if (typeof v !== 'function') {
      calls.push([`watch(opts, ${label(v)}, fn)`, () => native.watch({ events: ['page-faults'] }, v, noop)]);
      calls.push([`watch(opts, fn, ${label(v)})`, () => native.watch({ events: ['page-faults'] }, noop, v)]);
      calls.push([`perfring.watch(opts, ${label(v)})`, () => perfring.watch({ events: ['page-faults'] }, v)]);
    }
    calls.push([`events: [${label(v)}]`, () => perfring.watch({ events: [v] }, noop)]);
    if (v !== undefined && !(Array.isArray(v) && v.length))
      calls.push([`cpus: ${label(v)}`, () => perfring.watch({ events: ['page-faults'], cpus: v }, noop)]);
    for (const k of ['pid', 'watermark', 'flushMs', 'pages'])
      if (v !== undefined && typeof v !== 'number' || Number.isNaN(v) || v === -1 || v === 1.5)
        calls.push([`${k}: ${label(v)}`, () => perfring.watch({ events: ['page-faults'], [k]: v }, noop)]);
  }
  for (const ev of [':', 'a:', ':b', '::', 'sys/x:y', '.x:y', 'x:.y', '..:..'])
    calls.push([`events: ['${ev}']`, () => perfring.watch({ events: [ev] }, noop)]);
  for (const v of wrong) {
    if (!(Array.isArray(v) && v.length) && v !== undefined)
      calls.push([`command: ${label(v)}`, () => perfring.watch({ events: ['page-faults'], command: v }, noop)]);
    if (typeof v !== 'string' || !v)
      calls.push([`command: [${label(v)}]`, () => perfring.watch({ events: ['page-faults'], command: [v] }, noop)]);
    if (v !== undefined && typeof v !== 'number' || Number.isNaN(v) || v === -1)
      calls.push([`orderWindowMs: ${label(v)}`,
                  () => perfring.watch({ events: ['page-faults'], orderWindowMs: v }, noop)]);
  }
  calls.push(['command: NUL', () => perfring.watch({ events: ['page-faults'], command: ['true', 'a\0b'] }, noop)]);
  calls.push(['command: sparse', () => perfring.watch({ events: ['page-faults'], command: ['true', , 'x'] }, noop)]);
  calls.push(['command and pid', () => perfring.watch({ events: ['page-faults'], command: ['true'], pid: 1 }, noop)]);
  calls.push(['command: missing', () => perfring.watch({ events: ['page-faults'], command: ['/nonexistent/x'] }, noop)]);
  calls.push(['orderWindowMs: 60001', () => perfring.watch({ events: ['page-faults'], orderWindowMs: 60001 }, noop)]);
  calls.push(['cpus: [4096]', () => perfring.watch({ events: ['page-faults'], cpus: [4096] }, noop)]);
  calls.push(['cpus: sparse', () => perfring.watch({ events: ['page-faults'], cpus: [, 0] }, noop)]);

  const bad = [];
  for (const [what, fn] of calls) {
    const e = codeOf(fn);
    if (!e)
      bad.push(`${what}: did not throw`);
    else if (!(e instanceof Error) || typeof e.code !== 'string' || !e.code)
      bad.push(`${what}: ${e && e.constructor.name} without a code: ${e && e.message}`);
  }
  assert.ok(calls.length >= 50, `${calls.length} misuse calls`);
  assert.deepStrictEqual(bad, [], `${bad.length} of ${calls.length} misuse calls`);

  // fields() with a real handle: the bytes must lie inside a real ArrayBuffer.
  const h = native.watch({ events: ['page-faults'], cpus: [0] }, noop, noop);
  const ab = new ArrayBuffer(64), fieldCalls = [];
  for (const args of [[], [ab], [ab, 0], [ab, 0, 0], [new Uint8Array(8), 0, 0, 0], [ab, 1, 0, 0],
                      [ab, -1, 0, 0], [ab, 0, 65, 0], [ab, 0, 0, 65], [ab, 0, 60, 8], [ab, 0, 1.5, 0],
                      [ab, 0, NaN, 0], [ab, 0, 0, Infinity], [ab, 0, '0', 0], [ab, 0, 0, 10n]])
    fieldCalls.push([`fields(handle, ${args.map(label).join(', ')})`, () => native.fields(h, ...args)]);
  for (const [what, fn] of fieldCalls) {
    const e = codeOf(fn);
    if (!e || e.code !== 'EINVAL')
      bad.push(`${what}: ${e ? e.code : 'did not throw'}`);
  }
  // In bounds, any bytes decode (a software event has no fields).
  assert.deepStrictEqual(native.fields(h, ab, 0, 0, 64), {});
  assert.deepStrictEqual(bad, [], `${bad.length} fields() misuse calls`);

  await native.close(h);

  // A closed watch's handle still answers, and a misuse after close too.
  const w = perfring.watch({ events: ['page-faults'], cpus: [0] }, noop);
  await w.close();
  assert.ok(Array.isArray(w.stats()));
  const e = codeOf(() => native.stats(null));
  assert.strictEqual(e.code, 'EINVAL');
  assert.match(e.message, /null, not a watch handle/);
});

test('an empty part of SYSTEM:NAME is named, never a tracefs path', () => {
  const cases = [
    [':', /its system and its name are empty/],
    ['syscalls:', /its name \(after the ':'\) is empty/],
    [':sys_enter_getpid', /its system \(before the ':'\) is empty/],
  ];
  for (const [ev, msg] of cases) {
    const e = codeOf(() => perfring.watch({ events: [ev] }, noop));
    assert.ok(e, `${ev}: threw`);
    assert.strictEqual(e.code, 'EINVAL', e.message);
    assert.match(e.message, msg);
    assert.doesNotMatch(e.message, /\/\/|format/, e.message);
  }
  // The library's own check reaches JavaScript too.
  const e = codeOf(() => perfring.watch({ events: ['.x:y'] }, noop));
  assert.strictEqual(e.code, 'EINVAL');
  assert.match(e.message, /system "\.x" starts with '\.'/);
});
