import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_PIXELS } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';

/**
 * Runs jpegLumaGrid in worker threads, one per core, so that reading JPEGs neither blocks the
 * event loop nor stays on one core. Workers start on first use and do not keep the process alive
 * while idle. A worker that fails answers null for the reads it had (libvips then decodes those
 * images) and is replaced on the next read.
 */

interface Slot {
  worker: Worker | null;
  pending: Map<number, (grid: LumaGrid | null) => void>;
}

const slots: Slot[] = Array.from({ length: Math.max(1, os.availableParallelism()) }, () => ({ worker: null, pending: new Map() }));
let nextId = 0;

function start(slot: Slot): Worker {
  const worker = new Worker(new URL('./jpeg-dc-worker.mjs', import.meta.url));
  const fail = () => {
    if (slot.worker !== worker) return;
    slot.worker = null;
    for (const resolve of slot.pending.values()) resolve(null);
    slot.pending.clear();
  };
  worker.on('message', ({ id, grid }: { id: number; grid: LumaGrid | null }) => {
    const resolve = slot.pending.get(id);
    slot.pending.delete(id);
    if (slot.pending.size === 0) worker.unref();
    resolve?.(grid);
  });
  worker.on('error', fail);
  worker.on('exit', fail);
  slot.worker = worker;
  return worker;
}

/** jpegLumaGrid(bytes, maxPixels, colour), read in the least busy worker; `bytes` is copied, not moved. */
export function readLumaGrid(bytes: Uint8Array, maxPixels: number, colour = false): Promise<LumaGrid | null> {
  const slot = slots.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
  const worker = slot.worker ?? start(slot);
  const id = nextId++;
  // A copy (Buffer.slice would share memory), moved to the worker.
  const copy = new Uint8Array(bytes);
  return new Promise((resolve) => {
    slot.pending.set(id, resolve);
    // Referenced while it owes an answer, so that a caller awaiting it keeps the process alive.
    worker.ref();
    worker.postMessage({ id, bytes: copy, maxPixels, colour }, [copy.buffer]);
  });
}

/**
 * A JPEG's grid (jpeg-dc.ts), with its colour image when asked for and large enough; null for
 * anything else, without the trip to a worker when the bytes do not start as a JPEG.
 */
export function readJpeg(bytes: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS, colour = false): Promise<LumaGrid | null> {
  return bytes[0] === 0xff && bytes[1] === 0xd8 ? readLumaGrid(bytes, maxPixels, colour) : Promise.resolve(null);
}
