import type { Area, DetailRaster } from './analysis-raster.js';
import { clamp } from './boxes.mjs';

/** RGB pixels, 3 bytes each, row-major. */
export interface Raster {
  pixels: Buffer;
  width: number;
  height: number;
}

/**
 * A region of the picture resampled to `side` on its longer side from a raster of a part of it
 * (`source.area`, which holds the region), here rather than by sharp: a sharp pipeline copies the
 * whole source raster in (5 MB for a 1.6 MP picture) for every region, where the region itself is a
 * few thousand pixels. Each output pixel averages the source pixels under it when the region
 * shrinks, and is interpolated between its four nearest when it grows. Where each output column and
 * row reads from is worked out once, not for every pixel (a third of the time: regions took about
 * 10 CPU ms of a 1-2 MP picture's 60).
 */
export function regionRaster(source: DetailRaster, region: Area, side: number): Raster {
  const scale = source.width / source.area.width;
  const fit = side / Math.max(region.width, region.height);
  const width = Math.max(1, Math.round(region.width * fit));
  const height = Math.max(1, Math.round(region.height * fit));
  // Source pixels per output pixel, and where the region starts, in source pixels.
  const columns = { start: (region.left - source.area.left) * scale, step: (region.width * scale) / width, count: width, size: source.width };
  const rows = { start: (region.top - source.area.top) * scale, step: (region.height * scale) / height, count: height, size: source.height };
  const pixels = Buffer.alloc(width * height * 3);
  if (columns.step >= 1 && rows.step >= 1) averaged(source, spans(columns), spans(rows), pixels);
  else interpolated(source, neighbours(columns), neighbours(rows), pixels);
  return { pixels, width, height };
}

/** Output pixels along one axis: `count` of them, `step` source pixels each from `start`, in a source `size` long. */
interface Axis {
  start: number;
  step: number;
  count: number;
  size: number;
}

/** The source pixels [from, to) under each output pixel, at least one. */
function spans({ start, step, count, size }: Axis): { from: Int32Array; to: Int32Array } {
  const from = new Int32Array(count);
  const to = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const at = start + i * step;
    from[i] = clamp(Math.floor(at), 0, size - 1);
    to[i] = clamp(Math.ceil(at + step), from[i]! + 1, size);
  }
  return { from, to };
}

/** The mean of the source pixels under each output pixel. */
function averaged(source: Raster, columns: ReturnType<typeof spans>, rows: ReturnType<typeof spans>, out: Buffer): void {
  const { pixels, width } = source;
  let at = 0;
  for (let y = 0; y < rows.from.length; y++) {
    const y0 = rows.from[y]!;
    const y1 = rows.to[y]!;
    for (let x = 0; x < columns.from.length; x++) {
      const x0 = columns.from[x]!;
      const x1 = columns.to[x]!;
      let r = 0;
      let g = 0;
      let b = 0;
      for (let row = y0; row < y1; row++) {
        for (let from = (row * width + x0) * 3, end = (row * width + x1) * 3; from < end; from += 3) {
          r += pixels[from]!;
          g += pixels[from + 1]!;
          b += pixels[from + 2]!;
        }
      }
      const count = (x1 - x0) * (y1 - y0);
      out[at++] = r / count;
      out[at++] = g / count;
      out[at++] = b / count;
    }
  }
}

/** The two source pixels nearest each output pixel's centre, and the weight of the second. */
function neighbours({ start, step, count, size }: Axis): { near: Int32Array; far: Int32Array; weight: Float64Array } {
  const near = new Int32Array(count);
  const far = new Int32Array(count);
  const weight = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const centre = clamp(start + i * step + step / 2 - 0.5, 0, size - 1);
    near[i] = Math.floor(centre);
    far[i] = Math.min(near[i]! + 1, size - 1);
    weight[i] = centre - near[i]!;
  }
  return { near, far, weight };
}

/** Each output pixel bilinearly interpolated at its centre (as raster.ts's bilinear, for all three channels at once). */
function interpolated(source: Raster, columns: ReturnType<typeof neighbours>, rows: ReturnType<typeof neighbours>, out: Buffer): void {
  const { pixels, width } = source;
  let at = 0;
  for (let y = 0; y < rows.near.length; y++) {
    const row0 = rows.near[y]! * width;
    const row1 = rows.far[y]! * width;
    const fy = rows.weight[y]!;
    for (let x = 0; x < columns.near.length; x++) {
      const fx = columns.weight[x]!;
      const a = (row0 + columns.near[x]!) * 3;
      const b = (row0 + columns.far[x]!) * 3;
      const c = (row1 + columns.near[x]!) * 3;
      const d = (row1 + columns.far[x]!) * 3;
      for (let channel = 0; channel < 3; channel++) {
        const top = pixels[a + channel]! * (1 - fx) + pixels[b + channel]! * fx;
        const bottom = pixels[c + channel]! * (1 - fx) + pixels[d + channel]! * fx;
        out[at++] = top * (1 - fy) + bottom * fy;
      }
    }
  }
}
