// SPDX-License-Identifier: MIT
// Errors are JavaScript Errors: the library's sentence as the message, the
// errno's name as code.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const perfring = require('perfring');

const noop = () => {};

function throwsCode(fn, code, message) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof Error, 'it threw an Error');
  assert.strictEqual(err.code, code, err.message);
  assert.match(err.message, message);
  return err;
}

test('an unknown tracepoint throws ENOENT with the library\'s sentence', () => {
  throwsCode(() => perfring.watch({ events: ['syscalls:sys_enter_no_such_call'] }, noop),
             'ENOENT', /sys_enter_no_such_call/);
  throwsCode(() => perfring.watch({ events: ['no_such_system:x'] }, noop), 'ENOENT', /no_such_system/);
});

test('a bad option throws EINVAL with the sentence', () => {
  // The library's own check: a ring is a power of two pages.
  const e = throwsCode(() => perfring.watch({ events: ['page-faults'], pages: 3 }, noop),
                       'EINVAL', /ring_pages|power of two/);
  assert.ok(e.message.length > 20, e.message);
  // The watermark must fit in the ring.
  throwsCode(() => perfring.watch({ events: ['page-faults'], pages: 1, watermark: 1 << 20 }, noop),
             'EINVAL', /watermark/);
});

test('options are checked before anything is opened', () => {
  const cases = [
    [undefined, /options object/],
    [{}, /'events' is required/],
    [{ events: 'page-faults' }, /'events' must be an array/],
    [{ events: [] }, /'events' must be an array of 1/],
    [{ events: [42] }, /each of 'events'/],
    [{ events: [''] }, /each of 'events'/],
    [{ events: ['a\0b'] }, /each of 'events'/],
    [{ events: ['x'.repeat(1000)] }, /each of 'events'/],
    [{ events: ['no-such-software'] }, /unknown event 'no-such-software'/],
    [{ events: ['page-faults'], pid: -1 }, /'pid' must be an integer/],
    [{ events: ['page-faults'], pid: 1.5 }, /'pid' must be an integer/],
    [{ events: ['page-faults'], pid: '1' }, /'pid' must be an integer/],
    [{ events: ['page-faults'], cpus: [0, -1] }, /'cpus\[\]' must be an integer/],
    [{ events: ['page-faults'], cpus: [] }, /'cpus' must be an array of 1/],
    [{ events: ['page-faults'], flushMs: 0 }, /'flushMs'/],
    [{ events: ['page-faults'], pages: NaN }, /'pages'/],
    [{ events: ['page-faults'], watermak: 1 }, /unknown option 'watermak'/],
  ];
  for (const [opts, msg] of cases)
    throwsCode(() => perfring.watch(opts, noop), 'EINVAL', msg);
  throwsCode(() => perfring.watch({ events: ['page-faults'] }), 'EINVAL', /callback/);
});

test('a throwing getter in the options propagates as is', () => {
  const opts = { get events() { throw new RangeError('from the getter'); } };
  assert.throws(() => perfring.watch(opts, noop), RangeError);
});

test('a pid that does not exist throws ESRCH', () => {
  throwsCode(() => perfring.watch({ events: ['page-faults'], pid: 0x3fffffff }, noop), 'ESRCH', /./);
});
