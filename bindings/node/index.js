// SPDX-License-Identifier: MIT
// perfring for Node.js: the JavaScript face of perfring.node (README.md).
'use strict';

const { EventEmitter } = require('node:events');
const { inspect } = require('node:util');
const native = require('./perfring.node');

// One delivery: the ArrayBuffer the addon filled (32-byte headers, then the
// RAW bytes; pn_rec in src/pn.h), read through typed arrays. A Sample holds
// only its batch and index; each property is read from the bytes when asked
// for, so a sample nobody looks at costs one small object.
class Batch {
  constructor(w, buf, n) {
    this.w = w;               // { handle, names, decoders } of the watch
    this.buf = buf;
    this.u32 = new Uint32Array(buf, 0, n * 8);
    this.u64 = null;
    this.dv = null;
    this.base = n * 32;
  }
}

const LE = require('node:os').endianness() === 'LE';

// An event whose fields are all integers of 1, 2, 4 or 8 bytes (the addon's
// layout: [name, offset, size, signed, ...]) is decoded here, straight from
// the bytes, when the payload holds every field; any other (strings,
// arrays, a short payload) by the addon, which leaves out what is missing.
function decoder(layout) {
  if (!layout)
    return null;
  const names = [], offs = [], kinds = [];
  let end = 0;
  for (let i = 0; i < layout.length; i += 4) {
    names.push(layout[i]);
    offs.push(layout[i + 1]);
    kinds.push(layout[i + 2] * 2 + (layout[i + 3] ? 1 : 0));
    end = Math.max(end, layout[i + 1] + layout[i + 2]);
  }
  return (dv, at, size) => {
    if (size < end)
      return undefined;
    const o = {};
    for (let k = 0; k < names.length; k++) {
      const p = at + offs[k];
      switch (kinds[k]) {
        case 2: o[names[k]] = dv.getUint8(p); break;
        case 3: o[names[k]] = dv.getInt8(p); break;
        case 4: o[names[k]] = dv.getUint16(p, LE); break;
        case 5: o[names[k]] = dv.getInt16(p, LE); break;
        case 8: o[names[k]] = dv.getUint32(p, LE); break;
        case 9: o[names[k]] = dv.getInt32(p, LE); break;
        case 16: o[names[k]] = dv.getBigUint64(p, LE); break;
        default: o[names[k]] = dv.getBigInt64(p, LE); break;
      }
    }
    return o;
  };
}

class Sample {
  #b;
  #i;
  #fields;

  constructor(batch, i) {
    this.#b = batch;
    this.#i = i * 8;
  }

  get event() { return this.#b.w.names[this.#b.u32[this.#i]]; }
  get cpu() { return this.#b.u32[this.#i + 1]; }
  get pid() { return this.#b.u32[this.#i + 2]; }
  get tid() { return this.#b.u32[this.#i + 3]; }

  // A BigInt made when asked for: CLOCK_MONOTONIC ns.
  get time() {
    const b = this.#b;
    b.u64 ??= new BigUint64Array(b.buf, 0, b.base / 8);
    return b.u64[(this.#i >> 1) + 2];
  }

  // Decoded on first access, then kept: integer-only events here, the
  // rest by the addon (the library's bounds-checked field accessors).
  get fields() {
    if (this.#fields === undefined) {
      const b = this.#b, i = this.#i, ev = b.u32[i], at = b.base + b.u32[i + 6], size = b.u32[i + 7];
      const d = b.w.decoders[ev];
      if (d)
        this.#fields = d(b.dv ??= new DataView(b.buf), at, size);
      this.#fields ??= native.fields(b.w.handle, b.buf, ev, at, size);
    }
    return this.#fields;
  }

  // The plain object the properties make, e.g. for JSON or a deep compare.
  toObject() {
    const { event, cpu, pid, tid, time, fields } = this;
    return { event, cpu, pid, tid, time, fields };
  }

  [inspect.custom](depth, opts) {
    return `Sample ${inspect(this.toObject(), opts)}`;
  }
}

// A watch: samples go to the callback, one array per loop iteration that
// read records. Emits 'end' once every ring of a pid (or command) watch saw
// its task exit (after the last samples; the watch then closes itself), and
// 'error' when a ring fails on the loop or a returning CPU fails to open
// (err.cpu).
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
    const w = { handle: null, names: null, decoders: null };
    const handle = native.watch(opts, (buf, n) => {
      const batch = new Batch(w, buf, n);
      const samples = new Array(n);
      for (let i = 0; i < n; i++)
        samples[i] = new Sample(batch, i);
      callback(samples);
    }, (what, err) => this.#notify(what, err));
    w.handle = handle;
    w.names = native.events(handle);
    w.decoders = native.layouts(handle).map(decoder);
    this.#handle = handle;
    // With `command`: a promise of { code, signal } (one of them null), as
    // a ChildProcess's 'exit' gives them; undefined otherwise.
    this.exited = native.exited(handle);
    // With `command`: the child's pid (the watch's pid).
    this.pid = native.pid(handle);
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

module.exports = { watch, Watch, Sample };
