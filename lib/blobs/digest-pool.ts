import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BlobDigest } from '../ports.js';

/**
 * Reads and hashes files in worker threads, one per core, so that a first reload of a million
 * files spreads its reading and hashing over every core instead of the event loop's. Files asked
 * for in the same turn of the event loop go to a worker together, a batch a message, since a
 * message costs the main thread more than a small file's read. Workers start on first use and do
 * not keep the process alive while idle; a worker that fails is replaced, and the files it owed are
 * read on the main thread instead.
 */

// Files sent in one message: enough to make a message's cost small beside the reads.
const BATCH = 32;

interface Asked {
  file: string;
  headBytes: number;
  resolve: (digest: BlobDigest | null) => void;
}

interface Slot {
  worker: Worker | null;
  pending: Map<number, Asked[]>;
}

const slots: Slot[] = Array.from({ length: Math.max(1, os.availableParallelism()) }, () => ({ worker: null, pending: new Map() }));
let nextId = 0;
let queued: Asked[] = [];

/** The main thread's own read, for a worker that failed. */
async function readHere(file: string, headBytes: number): Promise<BlobDigest | null> {
  const bytes = await readFile(file).catch(() => null);
  return bytes && { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head: bytes.subarray(0, headBytes) };
}

function drop(slot: Slot, worker: Worker): void {
  if (slot.worker !== worker) return;
  slot.worker = null;
  for (const batch of slot.pending.values()) for (const asked of batch) readHere(asked.file, asked.headBytes).then(asked.resolve);
  slot.pending.clear();
  void worker.terminate();
}

function start(slot: Slot): Worker {
  const worker = new Worker(new URL('./digest-worker.mjs', import.meta.url));
  worker.on('message', ({ id, digests }: { id: number; digests: (BlobDigest | null)[] }) => {
    const batch = slot.pending.get(id);
    slot.pending.delete(id);
    if (slot.pending.size === 0) worker.unref();
    batch?.forEach((asked, i) => asked.resolve(digests[i]));
  });
  worker.on('error', () => drop(slot, worker));
  worker.on('exit', () => drop(slot, worker));
  slot.worker = worker;
  return worker;
}

function send(batch: Asked[]): void {
  const slot = slots.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
  const worker = slot.worker ?? start(slot);
  const id = nextId++;
  slot.pending.set(id, batch);
  // Referenced while it owes an answer, so that a caller awaiting it keeps the process alive.
  worker.ref();
  worker.postMessage({ id, files: batch.map((a) => a.file), headBytes: Math.max(...batch.map((a) => a.headBytes)) });
}

function flush(): void {
  const asked = queued;
  queued = [];
  for (let from = 0; from < asked.length; from += BATCH) send(asked.slice(from, from + BATCH));
}

/** The file's size, SHA-256 and first `headBytes` bytes, read in a worker thread; null when it cannot be read. */
export function digestFile(file: string, headBytes: number): Promise<BlobDigest | null> {
  return new Promise((resolve) => {
    if (queued.length === 0) setImmediate(flush);
    queued.push({ file, headBytes, resolve });
  });
}
