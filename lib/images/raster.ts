/**
 * Rasters of luma and their resampling: the pure half of the fingerprint pipeline, shared by the
 * Node service (which decodes, lib/images/luma.ts) and the Worker (which only compares).
 */

/** Side of the square sample libvips makes; a 5 % border is 13 samples wide. */
export const SAMPLE_SIDE = 256;

/** The longest side of a thumbnail (thumbnail.ts): sharp on the queue's rows and the watchlist's cards, a few KB each. */
export const THUMBNAIL_SIDE = 320;

/**
 * The size of an image's analysis raster (analysis-raster.ts), from its upright size: the smallest
 * that every consumer can be made from without enlarging (the luma sample is SAMPLE_SIDE on each
 * side, the thumbnail THUMBNAIL_SIDE on its longer side, the face detector's input 192 px on its
 * longer side), or the image's own size when it is smaller.
 */
export function analysisRasterSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.max(SAMPLE_SIDE / Math.min(width, height), THUMBNAIL_SIDE / Math.max(width, height));
  return scale < 1 ? { width: Math.round(width * scale), height: Math.round(height * scale) } : { width, height };
}

/**
 * How an EXIF orientation (1-8: as stored, mirrored, turned 180, flipped, transposed, turned 90
 * clockwise, transversed, turned 90 counter-clockwise) maps the stored image onto the upright one:
 * whether the axes swap, and whether the upright x (and y) axis runs against the stored axis it
 * comes from.
 */
export function orientationAxes(orientation: number): { transposed: boolean; flipX: boolean; flipY: boolean } {
  return {
    transposed: orientation >= 5,
    flipX: orientation === 2 || orientation === 3 || orientation === 6 || orientation === 7,
    flipY: orientation === 3 || orientation === 4 || orientation === 7 || orientation === 8,
  };
}

/** Pixels of `channels` bytes each, stood upright per the EXIF orientation (the same array when 1). */
export function orientPixels(
  data: Uint8Array,
  width: number,
  height: number,
  channels: number,
  orientation: number,
): { data: Uint8Array; width: number; height: number } {
  if (orientation === 1) return { data, width, height };
  const { transposed, flipX, flipY } = orientationAxes(orientation);
  const outWidth = transposed ? height : width;
  const outHeight = transposed ? width : height;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let uprightX = transposed ? y : x;
      let uprightY = transposed ? x : y;
      if (flipX) uprightX = outWidth - 1 - uprightX;
      if (flipY) uprightY = outHeight - 1 - uprightY;
      const from = (y * width + x) * channels;
      const to = (uprightY * outWidth + uprightX) * channels;
      for (let c = 0; c < channels; c++) out[to + c] = data[from + c];
    }
  }
  return { data: out, width: outWidth, height: outHeight };
}

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

/**
 * Channel `channel` of `channels` interleaved ones at (x, y), bilinear between the four nearest
 * pixels, in coordinates where pixel (i, j)'s centre is (i, j); NaN outside the pixel centres.
 * The one sampler of the geometric check, the edit check, the turn finder and the face regions.
 */
export function bilinear(pixels: ArrayLike<number>, width: number, height: number, x: number, y: number, channels = 1, channel = 0): number {
  if (!(x >= 0 && y >= 0 && x <= width - 1 && y <= height - 1)) return NaN;
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const x1 = Math.min(x0 + 1, width - 1);
  const y1 = Math.min(y0 + 1, height - 1);
  const fx = x - x0;
  const fy = y - y0;
  const [row0, row1] = [y0 * width, y1 * width];
  const top = pixels[(row0 + x0) * channels + channel] * (1 - fx) + pixels[(row0 + x1) * channels + channel] * fx;
  const bottom = pixels[(row1 + x0) * channels + channel] * (1 - fx) + pixels[(row1 + x1) * channels + channel] * fx;
  return top * (1 - fy) + bottom * fy;
}
