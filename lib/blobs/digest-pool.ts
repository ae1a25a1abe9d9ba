import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { workerPool } from '../threads/worker-pool.js';
import type { BlobDigest } from '../ports.js';

/**
 * Reads and hashes files in worker threads (lib/threads/worker-pool.ts), one per core, so that a
 * first reload of a million files spreads its reading and hashing over every core instead of the
 * event loop's. Files asked for in the same turn of the event loop go to a worker together, a batch
 * a message, since a message costs the main thread more than a small file's read. A worker that
 * fails is replaced, and the files it owed are read on the main thread instead. A batch past its
 * deadline (a file whose read never ends: a hung network share) is
 * asked again a file at a time (the other batches its worker owed, as they were), and the file
 * that is late alone answers null (the reload reports it as unreadable and tries it again next time)
 * instead of holding the reload for good. A name is read only when it is a regular file: a link is
 * answered 'link' unread (whether its target stays in its folder is the caller's check), so the
 * main thread stats nothing for the ordinary file.
 */

// Files sent in one message: enough to make a message's cost small beside the reads.
const BATCH = 32;

/**
 * How long a batch may take once its worker takes it up: 32 files of 50 MB read in about 8 s from
 * a disk of 200 MB/s; a batch that has not answered in 60 s has a read that is stuck.
 */
export const DIGEST_DEADLINE_MS = 60_000;

/** A file's digest; 'link' for a symbolic link (not followed); null when there is no regular file to read. */
export type FileDigest = BlobDigest | 'link' | null;

interface Asked {
  file: string;
  headBytes: number;
  deadlineMs: number;
  resolve: (digest: FileDigest) => void;
}

const pool = workerPool<{ files: string[]; headBytes: number }, { digests: FileDigest[] }>(new URL('./digest-worker.mjs', import.meta.url));
let queued: Asked[] = [];

/** The main thread's own read, for a worker that failed: the same rules as the worker's. */
async function readHere(file: string, headBytes: number): Promise<FileDigest> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ELOOP' ? ('link' as const) : null,
  );
  if (handle === null || handle === 'link') return handle;
  try {
    if (!(await handle.stat()).isFile()) return null;
    const bytes = await handle.readFile();
    return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head: bytes.subarray(0, headBytes) };
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

async function send(batch: Asked[]): Promise<void> {
  const headBytes = Math.max(...batch.map((a) => a.headBytes));
  const deadlineMs = Math.max(...batch.map((a) => a.deadlineMs));
  const read = await pool.call({ files: batch.map((a) => a.file), headBytes }, { deadlineMs });
  if (read.ok) batch.forEach((asked, i) => asked.resolve(read.answer.digests[i]));
  else if (read.reason === 'failed') for (const asked of batch) readHere(asked.file, asked.headBytes).then(asked.resolve);
  else if (read.reason === 'dropped') void send(batch);
  else if (batch.length === 1) batch[0].resolve(null);
  // Which of the batch is stuck is not known: each is asked alone.
  else for (const asked of batch) void send([asked]);
}

function flush(): void {
  const asked = queued;
  queued = [];
  for (let from = 0; from < asked.length; from += BATCH) void send(asked.slice(from, from + BATCH));
}

/**
 * The file's size, SHA-256 and first `headBytes` bytes, read in a worker thread; 'link' for a
 * symbolic link; null when it is no regular file or cannot be read (or not within the deadline).
 */
export function digestFile(file: string, headBytes: number, deadlineMs = DIGEST_DEADLINE_MS): Promise<FileDigest> {
  return new Promise((resolve) => {
    if (queued.length === 0) setImmediate(flush);
    queued.push({ file, headBytes, deadlineMs, resolve });
  });
}
