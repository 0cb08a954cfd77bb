#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// A live top-10 of the tasks switched in (sched:sched_switch's next_comm) on
// every CPU, printed each second. Needs root. Ctrl-C stops it.
//   node top-switch.js [SECONDS]     (0 or none: until Ctrl-C)
'use strict';

const perfring = require('perfring');

const counts = new Map();
let total = 0;
const w = perfring.watch({ events: ['sched:sched_switch'], watermark: 16384 }, (samples) => {
  for (const s of samples)
    counts.set(s.fields.next_comm, (counts.get(s.fields.next_comm) ?? 0) + 1);
  total += samples.length;
});

const tick = setInterval(() => {
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 10);
  console.log(`\n${total} switches in the last second`);
  for (const [comm, n] of top)
    console.log(`${String(n).padStart(8)}  ${comm}`);
  counts.clear();
  total = 0;
}, 1000);

async function stop() {
  clearInterval(tick);
  await w.close();
  const lost = w.stats().reduce((sum, c) => sum + c.lost, 0);
  console.log(lost ? `${lost} records lost` : 'no records lost');
}
process.once('SIGINT', stop);
if (Number(process.argv[2]) > 0)
  setTimeout(stop, Number(process.argv[2]) * 1000);
