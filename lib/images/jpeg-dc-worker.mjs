// Reads JPEG luma grids off the main thread for jpeg-dc-pool.ts. Plain .mjs that registers tsx
// itself, because workers started from .ts files are not transformed reliably by vitest or tsx.
// Protocol, one message per request:
//   in:  { id, bytes: Uint8Array, maxPixels, colour: boolean }
//   out: { id, grid: LumaGrid | null }
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { jpegLumaGrid } = await import('./jpeg-dc.ts');

parentPort.on('message', ({ id, bytes, maxPixels, colour }) => {
  let grid = null;
  try {
    grid = jpegLumaGrid(bytes, maxPixels, colour);
  } catch {
    // The reader declines by returning null; anything it throws (say, no memory for a grid the
    // pixel limit allowed) is declined the same way, and libvips decides.
    grid = null;
  }
  parentPort.postMessage({ id, grid }, grid ? [grid.data.buffer, ...(grid.colour ? [grid.colour.pixels.buffer] : [])] : []);
});
