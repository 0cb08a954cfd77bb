// SPDX-License-Identifier: MIT
// perfring for Node.js: the JavaScript face of perfring.node (README.md).
'use strict';

const { EventEmitter } = require('node:events');
const native = require('./perfring.node');

// A watch: samples go to the callback, one array per loop iteration that
// read records. Emits 'end' once every ring of a pid watch saw its task
// exit (after the last samples; the watch then closes itself), and 'error'
// when a ring fails on the loop or a returning CPU fails to open (err.cpu).
class Watch extends EventEmitter {
  #handle;
  #closed = null;

  constructor(opts, callback) {
    super();
    if (typeof callback !== 'function') {
      const e = new Error('perfring.watch(options, callback): the callback must be a function');
      e.code = 'EINVAL';
      throw e;
    }
    this.#handle = native.watch(opts, callback, (what, err) => this.#notify(what, err));
  }

  #notify(what, err) {
    if (what === 'end') {
      this.close();
      this.emit('end');
    } else {
      this.emit('error', err);
    }
  }

  // [{ cpu, records, bytes, lost, corrupt, wakeups, maxFillPct, hup,
  //    samples, late, unknown, flushes }], the last values once closed.
  stats() {
    return native.stats(this.#handle);
  }

  // Detaches; resolves once every uv handle has closed. Safe to call again
  // (the same promise) and from inside the callback.
  close() {
    if (!this.#closed)
      this.#closed = native.close(this.#handle);
    return this.#closed;
  }

  // As with a timer or a socket: an unref'd watch does not keep the
  // process alive.
  unref() {
    native.unref(this.#handle);
    return this;
  }

  ref() {
    native.ref(this.#handle);
    return this;
  }

  // For the tests: which loop the handles are on, and which libuv runs.
  _diagnostics() {
    return native._diagnostics(this.#handle);
  }
}

function watch(opts, callback) {
  return new Watch(opts, callback);
}

module.exports = { watch, Watch };
