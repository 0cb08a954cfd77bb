// SPDX-License-Identifier: MIT
// Shared by the tests: exact workloads started on a signal, and fd counts.
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const GETPID_N = process.env.PERFRING_GETPID_N;

// A child that waits on a FIFO before its workload, so a watch on its pid
// can be set up first: go() lets it run; exited resolves with its status.
function workload(argv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfring-node-'));
  const fifo = path.join(dir, 'go');
  execFileSync('mkfifo', [fifo]);
  // A sanitizer build preloads its runtime for node; the workload must not
  // get it (the runtime calls getpid at start-up).
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  const child = spawn(argv[0], argv.slice(1).map((a) => (a === '$FIFO' ? fifo : a)),
                      { stdio: ['ignore', 'inherit', 'inherit'], env });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const cleanup = () => {
    if (child.exitCode === null && child.signalCode === null)
      child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // The open blocks until the child opens its end; closing it is the go.
  const go = () => fs.closeSync(fs.openSync(fifo, 'w'));
  return { child, pid: child.pid, go, exited, cleanup };
}

// tests/getpid_n: exactly n getpid(2) calls once go() is called.
function getpids(n) {
  if (!GETPID_N)
    throw new Error('PERFRING_GETPID_N must name tests/getpid_n (tests/test_node.sh sets it)');
  return workload([GETPID_N, String(n), '0', '$FIFO']);
}

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length;
}

// Resolves on the emitter's event, or rejects after ms.
function once(emitter, event, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms);
    emitter.once(event, (...args) => {
      clearTimeout(t);
      resolve(args);
    });
  });
}

module.exports = { workload, getpids, fdCount, once };
