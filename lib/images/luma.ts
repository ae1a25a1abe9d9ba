import sharp from 'sharp';
import { DEFAULT_MAX_PIXELS, decodeFailure, decodeOptions } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';
import { readLumaGrid } from './jpeg-dc-pool.js';

/**
 * The grayscale every fingerprint is computed from: Rec. 601 luma (0.299 R + 0.587 G + 0.114 B
 * of the gamma-encoded values), the Y that JPEG itself stores and the classic pHash's grayscale,
 * reduced by area averaging. Two sources give the same numbers to within rounding:
 * - a JPEG's own 1/8-scale luma grid (jpeg-dc.ts, read in worker threads), when the reader
 *   handles the file;
 * - otherwise libvips: a 256x256 RGB sample (shrink-on-load, linear kernel) on white, converted here.
 */

/** Side of the square sample libvips makes; a 5 % border is 13 samples wide. */
export const SAMPLE_SIDE = 256;

/** A window of a raster in its own cell units: [left, right) x [top, bottom). */
export interface Window {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface Raster {
  width: number;
  height: number;
  data: ArrayLike<number>;
  /** The part of the raster that is image: all of it, except a JPEG grid's partly-filled last blocks. */
  window: Window;
}

/**
 * Decodes once into a square luma sample. The aspect ratio is dropped, as the pHash drops it:
 * regions are fractions of the image, so a region cuts the same content at any aspect.
 */
export async function lumaSample(input: Buffer, maxPixels?: number): Promise<Raster> {
  let data: Buffer;
  try {
    data = await sharp(input, decodeOptions(maxPixels))
      .resize(SAMPLE_SIDE, SAMPLE_SIDE, { fit: 'fill', kernel: 'linear' })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer();
  } catch (error) {
    throw decodeFailure(error);
  }
  const luma = new Float64Array(SAMPLE_SIDE * SAMPLE_SIDE);
  if (data.length !== luma.length * 3) throw new Error(`lumaSample expected ${luma.length} RGB pixels, got ${data.length} bytes`);
  for (let i = 0; i < luma.length; i++) luma[i] = 0.299 * data[i * 3] + 0.587 * data[i * 3 + 1] + 0.114 * data[i * 3 + 2];
  return { width: SAMPLE_SIDE, height: SAMPLE_SIDE, data: luma, window: { left: 0, top: 0, right: SAMPLE_SIDE, bottom: SAMPLE_SIDE } };
}

/**
 * The JPEG's luma grid, upright per its EXIF orientation, or null when libvips must decode: not a
 * JPEG the grid reader handles, over the pixel limit (libvips then refuses it with the usual
 * reason), or under 256 px on a side, where 8x8 blocks are too coarse for a 32x32 sample.
 */
export async function jpegLuma(input: Buffer, maxPixels?: number): Promise<Raster | null> {
  // Only a JPEG (SOI marker first) is worth the trip to a worker.
  if (input[0] !== 0xff || input[1] !== 0xd8) return null;
  const grid = await readLumaGrid(input, maxPixels ?? DEFAULT_MAX_PIXELS);
  if (!grid || grid.imageWidth < 256 || grid.imageHeight < 256) return null;
  return orient(grid);
}

/**
 * Applies the EXIF orientation (1-8: as stored, mirrored, turned 180, flipped, transposed, turned
 * 90 clockwise, transversed, turned 90 counter-clockwise). The last column and row of blocks may
 * hold fewer than 8 image pixels; the window keeps track of where they land.
 */
function orient(grid: LumaGrid): Raster {
  const { width, height, data, orientation } = grid;
  const extentX = grid.imageWidth / 8;
  const extentY = grid.imageHeight / 8;
  const transposed = orientation >= 5;
  // Whether the displayed x (and y) axis runs against the stored axis it comes from.
  const flipX = orientation === 2 || orientation === 3 || orientation === 6 || orientation === 7;
  const flipY = orientation === 3 || orientation === 4 || orientation === 7 || orientation === 8;
  const outWidth = transposed ? height : width;
  const outHeight = transposed ? width : height;
  const out = orientation === 1 ? data : new Uint8Array(data.length);
  if (orientation !== 1) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let displayX = transposed ? y : x;
        let displayY = transposed ? x : y;
        if (flipX) displayX = outWidth - 1 - displayX;
        if (flipY) displayY = outHeight - 1 - displayY;
        out[displayY * outWidth + displayX] = data[y * width + x];
      }
    }
  }
  const spanX = transposed ? extentY : extentX;
  const spanY = transposed ? extentX : extentY;
  return {
    width: outWidth,
    height: outHeight,
    data: out,
    window: {
      left: flipX ? outWidth - spanX : 0,
      right: flipX ? outWidth : spanX,
      top: flipY ? outHeight - spanY : 0,
      bottom: flipY ? outHeight : spanY,
    },
  };
}

/** Area-average weights along one axis: output cell o mixes source cells first[o] + k with weights[o][k]. */
function areaWeights(from: number, to: number, size: number, outputs: number): { first: Int32Array; weights: Float64Array[] } {
  const first = new Int32Array(outputs);
  const weights: Float64Array[] = [];
  const step = (to - from) / outputs;
  for (let o = 0; o < outputs; o++) {
    const start = from + o * step;
    const end = start + step;
    first[o] = Math.max(0, Math.floor(start));
    const list: number[] = [];
    for (let i = first[o]; i < Math.ceil(end) && i < size; i++) list.push((Math.min(end, i + 1) - Math.max(start, i)) / step);
    weights.push(Float64Array.from(list));
  }
  return { first, weights };
}

/** The window of the raster resampled to side x side by area averaging (separable: columns, then rows). */
export function resample(raster: Raster, window: Window, side: number): Float64Array {
  const { width, height, data } = raster;
  const x = areaWeights(window.left, window.right, width, side);
  const y = areaWeights(window.top, window.bottom, height, side);
  const rowFrom = y.first[0];
  const rowTo = Math.min(height, y.first[side - 1] + y.weights[side - 1].length);
  const columns = new Float64Array(height * side);
  for (let row = rowFrom; row < rowTo; row++) {
    for (let o = 0; o < side; o++) {
      const weights = x.weights[o];
      const from = row * width + x.first[o];
      let sum = 0;
      for (let k = 0; k < weights.length; k++) sum += weights[k] * data[from + k];
      columns[row * side + o] = sum;
    }
  }
  const out = new Float64Array(side * side);
  for (let o = 0; o < side; o++) {
    const weights = y.weights[o];
    for (let k = 0; k < weights.length; k++) {
      const from = (y.first[o] + k) * side;
      for (let col = 0; col < side; col++) out[o * side + col] += weights[k] * columns[from + col];
    }
  }
  return out;
}
