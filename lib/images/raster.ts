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

/**
 * Summed-area table of a raster, (width + 1) x (height + 1): entry (x, y) is the sum of the cells
 * left of x and above y. Kept per raster, since a picture's 256 px luma sample is resampled about
 * twenty times (its pHash and every region hash).
 */
const tables = new WeakMap<object, Float64Array>();
function summedArea(raster: Raster): Float64Array {
  const known = tables.get(raster.data as object);
  if (known) return known;
  const { width, height, data } = raster;
  const stride = width + 1;
  const table = new Float64Array(stride * (height + 1));
  for (let y = 0; y < height; y++) {
    let row = 0;
    for (let x = 0; x < width; x++) {
      row += data[y * width + x];
      table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + row;
    }
  }
  tables.set(raster.data as object, table);
  return table;
}

/**
 * The window of the raster resampled to side x rows by area averaging: each output cell is the
 * mean of the source over its share of the window, a source cell counting for the part of it the
 * output cell covers (the part outside the raster counts as 0). The integral of a raster of
 * constant cells is bilinear within each cell, so it is read exactly from the summed-area table at
 * the output cells' corners.
 */
export function resample(raster: Raster, window: Window, side: number, rows = side): Float64Array {
  const { width, height } = raster;
  const table = summedArea(raster);
  const stride = width + 1;
  const integral = (x: number, y: number) => {
    const cx = Math.min(width, Math.max(0, x));
    const cy = Math.min(height, Math.max(0, y));
    const x0 = Math.min(width - 1, Math.floor(cx));
    const y0 = Math.min(height - 1, Math.floor(cy));
    const fx = cx - x0;
    const fy = cy - y0;
    const at = y0 * stride + x0;
    const a = table[at];
    const b = table[at + 1];
    const c = table[at + stride];
    const d = table[at + stride + 1];
    return a + fx * (b - a) + fy * (c - a) + fx * fy * (d - b - c + a);
  };
  const stepX = (window.right - window.left) / side;
  const stepY = (window.bottom - window.top) / rows;
  const corners = new Float64Array((side + 1) * (rows + 1));
  for (let j = 0; j <= rows; j++) {
    for (let i = 0; i <= side; i++) corners[j * (side + 1) + i] = integral(window.left + i * stepX, window.top + j * stepY);
  }
  const out = new Float64Array(side * rows);
  const area = stepX * stepY;
  for (let j = 0; j < rows; j++) {
    for (let i = 0; i < side; i++) {
      const top = j * (side + 1) + i;
      const bottom = top + side + 1;
      out[j * side + i] = (corners[bottom + 1] - corners[bottom] - corners[top + 1] + corners[top]) / area;
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
  const row0 = y0 * width;
  const row1 = y1 * width;
  const top = pixels[(row0 + x0) * channels + channel] * (1 - fx) + pixels[(row0 + x1) * channels + channel] * fx;
  const bottom = pixels[(row1 + x0) * channels + channel] * (1 - fx) + pixels[(row1 + x1) * channels + channel] * fx;
  return top * (1 - fy) + bottom * fy;
}
