// SPDX-License-Identifier: MIT
// For hotplug.test.js: a watch in a process of its own, whose
// RLIMIT_NOFILE the test lowers (prlimit) so that a returning CPU's
// perf_event_open fails with EMFILE. Told what to do over IPC; sends back
// the CPUs listed by stats(), the 'error's, and the lowest free fd.
'use strict';

const fs = require('node:fs');
const perfring = require('perfring');

// Two events, two fds a CPU: with one fd number left, the online list's
// read still works and the second perf_event_open fails.
const w = perfring.watch({ events: ['syscalls:sys_enter_getpid', 'syscalls:sys_exit_getpid'],
                           flushMs: 10 }, () => {});
let errors = 0;
w.on('error', (e) => {
  // The first goes to the test; any later one is counted.
  if (errors++)
    return;
  process.send({ error: { code: e.code, cpu: e.cpu, message: e.message,
                          isError: e instanceof Error } });
});

function lowestFreeFd() {
  const used = new Set(fs.readdirSync('/proc/self/fd').map(Number));
  let fd = 0;
  while (used.has(fd))
    fd++;
  return fd;
}

process.on('message', (m) => {
  if (m === 'cpus')
    process.send({ cpus: w.stats().map((s) => s.cpu) });
  else if (m === 'fd')
    process.send({ fd: lowestFreeFd() });
  else if (m === 'errors')
    process.send({ errors: errors - 1 });
  else if (m === 'close')
    w.close().then(() => process.disconnect());
});
process.send({ ready: true });
