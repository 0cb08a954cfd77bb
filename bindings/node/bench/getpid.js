#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The price of crossing into JavaScript: one task's getpid stream (tests/
// getpid_n, pinned to CPU 1) at a 4 KiB watermark, read by the addon on
// Node's loop and by libperfring-uv in C (bench/uv-getpid) on CPU 0; the
// consumer CPU per record and per wakeup, medians over rounds, the three
// (C, the addon counting, the addon reading every sample) interleaved
// within each round.
//   node getpid.js GETPID_N UV_GETPID [-n RECORDS] [-r ROUNDS] [-w WATERMARK] [-p PAGES]
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const perfring = require('perfring');

const [getpidN, uvGetpid, ...rest] = process.argv.slice(2);
const opt = { n: 1000000, r: 5, w: 4096, p: 64 };
for (let i = 0; i < rest.length; i += 2)
  opt[rest[i].replace(/^-/, '')] = Number(rest[i + 1]);
if (!getpidN || !uvGetpid || Object.values(opt).some((v) => !Number.isInteger(v) || v < 1)) {
  console.error('usage: node getpid.js GETPID_N UV_GETPID [-n RECORDS] [-r ROUNDS] [-w WATERMARK] [-p PAGES]');
  process.exit(2);
}

// Children still running: killed if the bench fails, so that none is left
// waiting on its FIFO for a go that will never come.
const live = new Set();
function track(child) {
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

// The generator waits on a FIFO; closing our end of it is the go.
function generator(dir) {
  const fifo = path.join(dir, `go${Math.random()}`);
  execFileSync('mkfifo', [fifo]);
  const child = track(spawn('taskset', ['-c', '1', getpidN, String(opt.n), '0', fifo],
                            { stdio: 'inherit' }));
  return { pid: child.pid, go: () => fs.closeSync(fs.openSync(fifo, 'w')),
           exited: new Promise((r) => child.on('exit', r)) };
}

// ns this thread ran, from the scheduler (/proc/thread-self/schedstat).
const threadNs = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
const processUs = () => { const u = process.cpuUsage(); return u.user + u.system; };

// read: every sample's pid, time (a BigInt) and fields are read too, so
// the lazy decode's cost shows.
async function addonRound(dir, read) {
  const g = generator(dir);
  let records = 0, sum = 0n;
  const w = perfring.watch({ events: ['syscalls:sys_enter_getpid'], pid: g.pid, watermark: opt.w,
                             pages: opt.p }, read ? (s) => {
    records += s.length;
    for (const x of s)
      sum += x.time + BigInt(x.pid + x.fields.__syscall_nr);
  } : (s) => { records += s.length; });
  const ended = new Promise((r) => w.once('end', r));
  const t0 = threadNs(), p0 = processUs();
  g.go();
  await ended;
  const mainUs = (threadNs() - t0) / 1000, procUs = processUs() - p0;
  await w.close();
  await g.exited;
  const st = w.stats();
  if (read && sum === 0n)
    throw new Error('no sample was read');
  return { records, cpu_us: mainUs, process_us: procUs, wakeups: st.reduce((a, c) => a + c.wakeups, 0),
           lost: st.reduce((a, c) => a + c.lost, 0) };
}

// uv-getpid's exit: { code, signal }, or { error } when it could not start.
function ended(child) {
  return new Promise((r) => {
    child.once('error', (error) => r({ error }));
    child.once('close', (code, signal) => r({ code, signal }));
  });
}

function exitText(st) {
  if (st.error)
    return `could not start: ${st.error.message}`;
  return st.signal ? `was killed by ${st.signal}` : `exited with status ${st.code}`;
}

async function cRound(dir) {
  const g = generator(dir);
  const c = track(spawn('taskset', ['-c', '0', uvGetpid, String(g.pid), String(opt.w), String(opt.p)],
                        { stdio: ['ignore', 'pipe', 'inherit'] }));
  const status = ended(c);
  const lines = readline.createInterface({ input: c.stdout });
  let result = null;
  for await (const line of lines) {
    if (line === 'ready')
      g.go();
    else if (line.startsWith('{'))
      result = JSON.parse(line);
  }
  const st = await status;
  if (!result || st.error || st.code !== 0)
    throw new Error(`${uvGetpid} ${exitText(st)}${result ? '' : ' before its result line'} ` +
                    '(its own message, if any, is above); no C row to compare with');
  await g.exited;
  return result;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function row(name, runs) {
  const per = (k, d) => median(runs.map((x) => x[k] / x[d]));
  return `| ${name} | ${median(runs.map((x) => x.records))} | ${(per('cpu_us', 'records') * 1000).toFixed(1)} | ` +
    `${(per('wakeups', 'records') * 1000).toFixed(2)} | ${per('cpu_us', 'wakeups').toFixed(1)} | ` +
    `${runs.some((x) => x.process_us) ? (per('process_us', 'records') * 1000).toFixed(1) : '-'} | ` +
    `${median(runs.map((x) => x.lost))} |`;
}

async function main() {
  execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfring-bench-'));
  const addon = [], c = [], reading = [];
  try {
    for (let i = 0; i < opt.r; i++) {
      c.push(await cRound(dir));
      addon.push(await addonRound(dir, false));
      reading.push(await addonRound(dir, true));
      const brief = (x) => `${x.records} records, ${Math.round(x.cpu_us)} µs, ${x.wakeups} wakeups, ` +
        `${x.lost} lost`;
      console.error(`round ${i + 1}: C ${brief(c[i])}; addon ${brief(addon[i])}; ` +
                    `addon reading ${brief(reading[i])}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`getpid stream of ${opt.n} calls, watermark ${opt.w} B, ${opt.p} pages, ${opt.r} rounds ` +
              `(medians); consumer on CPU 0, generator on CPU 1. CPU = the consumer's thread ` +
              `(the addon: Node's main thread; "process" adds V8's own threads).`);
  console.log('| consumer | records | CPU µs / 1,000 rec | wakeups / 1,000 rec | CPU µs / wakeup | process CPU µs / 1,000 rec | lost |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(row('libperfring-uv (C)', c));
  console.log(row('perfring.node (counts the samples)', addon));
  console.log(row('perfring.node (reads pid, time, fields of each)', reading));
  // Per round: the addon's CPU per record over the C adapter's in the same
  // round; the median and, as the noise of this shared machine, the spread.
  const ratios = (xs) => xs.map((x, i) => (x.cpu_us / x.records) / (c[i].cpu_us / c[i].records));
  const spread = (xs) => `${median(ratios(xs)).toFixed(2)}x (rounds ` +
    `${Math.min(...ratios(xs)).toFixed(2)}-${Math.max(...ratios(xs)).toFixed(2)})`;
  const lost = (xs) => xs.reduce((a, x) => a + x.lost, 0);
  console.log(`\nJavaScript costs ${spread(addon)} the C adapter's CPU per record ` +
              `(${spread(reading)} reading every sample's pid, time and fields); ` +
              `medians of the rounds' ratios. Lost over all rounds: C ${lost(c)}, ` +
              `addon ${lost(addon)}, addon reading ${lost(reading)}.`);
}

main().catch((e) => {
  console.error(`getpid.js: ${e.message}`);
  for (const child of live)
    child.kill('SIGKILL');
  process.exit(1);
});
