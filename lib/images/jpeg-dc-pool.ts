import { workerPool } from '../threads/worker-pool.js';
import { DEFAULT_MAX_PIXELS } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';

/**
 * Runs jpegLumaGrid in worker threads (lib/threads/worker-pool.ts), one per core, so that reading
 * JPEGs neither blocks the event loop nor stays on one core. A worker that fails, or that owes a
 * read past its deadline, answers null for the reads it had (libvips then decodes those images)
 * and is replaced on the next read.
 */

/**
 * How long a read may take once its worker takes it up. A 12 MP JPEG
 * reads in tens of milliseconds (24 ms for one of 0.9 MB here); a read that has not answered in 10 s
 * is stuck in the reader (as a camera JPEG's ICC profile once made it), and would otherwise hold its
 * analysis and a core for good. A read dropped too early costs only libvips' decode.
 */
export const READ_DEADLINE_MS = 10_000;

const pool = workerPool<{ bytes: Uint8Array; maxPixels: number; colour: boolean }, { grid: LumaGrid | null }>(new URL('./jpeg-dc-worker.mjs', import.meta.url));

/** jpegLumaGrid(bytes, maxPixels, colour), read in the least busy worker; `bytes` is copied, not moved. */
export async function readLumaGrid(bytes: Uint8Array, maxPixels: number, colour = false, deadline = READ_DEADLINE_MS): Promise<LumaGrid | null> {
  // A copy (Buffer.slice would share memory), moved to the worker.
  const copy = new Uint8Array(bytes);
  const read = await pool.call({ bytes: copy, maxPixels, colour }, { deadlineMs: deadline, transfer: [copy.buffer] });
  return read.ok ? read.answer.grid : null;
}

/**
 * A JPEG's grid (jpeg-dc.ts), with its colour image when asked for and large enough; null for
 * anything else, without the trip to a worker when the bytes do not start as a JPEG.
 */
export function readJpeg(bytes: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS, colour = false, deadline = READ_DEADLINE_MS): Promise<LumaGrid | null> {
  return bytes[0] === 0xff && bytes[1] === 0xd8 ? readLumaGrid(bytes, maxPixels, colour, deadline) : Promise.resolve(null);
}
