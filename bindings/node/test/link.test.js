// SPDX-License-Identifier: MIT
// The addon runs on Node's own loop and Node's own libuv: its handles are on
// napi_get_uv_event_loop()'s loop, its uv_* calls reach the libuv Node runs,
// and perfring.node needs no libuv of its own.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const perfring = require('perfring');

const addon = path.join(path.dirname(require.resolve('perfring')), 'perfring.node');

test('the handles are on Node\'s loop, and uv_* is Node\'s libuv', async () => {
  const w = perfring.watch({ events: ['page-faults'], pid: process.pid }, () => {});
  const d = w._diagnostics();
  await w.close();
  assert.strictEqual(d.onNodeLoop, true);
  assert.ok(d.handles >= 3, `${d.handles} adapter handles (a poll per ring, a timer, an idle)`);
  assert.strictEqual(d.uvVersion, process.versions.uv);
});

test('perfring.node has no DT_NEEDED on libuv and exports only Node-API entry points', () => {
  const dyn = execFileSync('readelf', ['-d', addon], { encoding: 'utf8' });
  assert.doesNotMatch(dyn, /NEEDED.*libuv/);
  assert.doesNotMatch(dyn, /NEEDED.*libperfring/);
  const undef = execFileSync('nm', ['-D', '--undefined-only', addon], { encoding: 'utf8' });
  assert.match(undef, / U uv_poll_start$/m, 'uv_* is left for Node to provide');
  const defs = execFileSync('nm', ['-D', '--defined-only', addon], { encoding: 'utf8' })
    .split('\n').filter((l) => / [TDBRVW] /.test(l)).map((l) => l.split(' ').pop()).sort();
  assert.deepStrictEqual(defs, ['napi_register_module_v1', 'node_api_module_get_api_version_v1']);
});
