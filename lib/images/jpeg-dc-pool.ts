import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_PIXELS } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';

/**
 * Runs jpegLumaGrid in worker threads, one per core, so that reading JPEGs neither blocks the
 * event loop nor stays on one core. Workers start on first use and do not keep the process alive
 * while idle. A worker that fails, or that owes a read past its deadline, answers null for the
 * reads it had (libvips then decodes those images) and is replaced on the next read.
 */

/**
 * How long a read may wait for its answer, its turn in the worker's queue included. A 12 MP JPEG
 * reads in tens of milliseconds (24 ms for one of 0.9 MB here); a read that has not answered in 10 s
 * is stuck in the reader (as a camera JPEG's ICC profile once made it), and would otherwise hold its
 * analysis and a core for good. A read dropped too early costs only libvips' decode.
 */
export const READ_DEADLINE_MS = 10_000;

interface Slot {
  worker: Worker | null;
  pending: Map<number, { resolve: (grid: LumaGrid | null) => void; timer: NodeJS.Timeout }>;
}

const slots: Slot[] = Array.from({ length: Math.max(1, os.availableParallelism()) }, () => ({ worker: null, pending: new Map() }));
let nextId = 0;

/** Drops the slot's worker: every read it owes answers null, and the next read starts another. */
function drop(slot: Slot, worker: Worker): void {
  if (slot.worker !== worker) return;
  slot.worker = null;
  for (const { resolve, timer } of slot.pending.values()) {
    clearTimeout(timer);
    resolve(null);
  }
  slot.pending.clear();
  void worker.terminate();
}

function start(slot: Slot): Worker {
  const worker = new Worker(new URL('./jpeg-dc-worker.mjs', import.meta.url));
  worker.on('message', ({ id, grid }: { id: number; grid: LumaGrid | null }) => {
    const read = slot.pending.get(id);
    slot.pending.delete(id);
    if (slot.pending.size === 0) worker.unref();
    if (!read) return;
    clearTimeout(read.timer);
    read.resolve(grid);
  });
  worker.on('error', () => drop(slot, worker));
  worker.on('exit', () => drop(slot, worker));
  slot.worker = worker;
  return worker;
}

/** jpegLumaGrid(bytes, maxPixels, colour), read in the least busy worker; `bytes` is copied, not moved. */
export function readLumaGrid(bytes: Uint8Array, maxPixels: number, colour = false, deadline = READ_DEADLINE_MS): Promise<LumaGrid | null> {
  const slot = slots.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
  const worker = slot.worker ?? start(slot);
  const id = nextId++;
  // A copy (Buffer.slice would share memory), moved to the worker.
  const copy = new Uint8Array(bytes);
  return new Promise((resolve) => {
    // Not referenced: a stuck worker is dropped if the process is still running, and never keeps it running.
    const timer = setTimeout(() => drop(slot, worker), deadline).unref();
    slot.pending.set(id, { resolve, timer });
    // Referenced while it owes an answer, so that a caller awaiting it keeps the process alive.
    worker.ref();
    worker.postMessage({ id, bytes: copy, maxPixels, colour }, [copy.buffer]);
  });
}

/**
 * A JPEG's grid (jpeg-dc.ts), with its colour image when asked for and large enough; null for
 * anything else, without the trip to a worker when the bytes do not start as a JPEG.
 */
export function readJpeg(bytes: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS, colour = false, deadline = READ_DEADLINE_MS): Promise<LumaGrid | null> {
  return bytes[0] === 0xff && bytes[1] === 0xd8 ? readLumaGrid(bytes, maxPixels, colour, deadline) : Promise.resolve(null);
}
