import { fromRaster, type AnalysisRaster } from './analysis-raster.js';
import { DEFAULT_MAX_PIXELS } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';
import { readLumaGrid } from './jpeg-dc-pool.js';
import { SAMPLE_SIDE, type Raster } from './raster.js';

/**
 * The grayscale every fingerprint is computed from: Rec. 601 luma (0.299 R + 0.587 G + 0.114 B
 * of the gamma-encoded values), the Y that JPEG itself stores and the classic pHash's grayscale,
 * reduced by area averaging. Two sources give the same numbers to within rounding:
 * - a JPEG's own 1/8-scale luma grid (jpeg-dc.ts, read in worker threads), when the reader
 *   handles the file;
 * - otherwise a 256x256 RGB sample (linear kernel) of the analysis raster (analysis-raster.ts),
 *   converted here.
 */

/**
 * The square luma sample of the image's analysis raster. The aspect ratio is dropped, as the pHash
 * drops it: regions are fractions of the image, so a region cuts the same content at any aspect.
 */
export async function lumaSample(image: AnalysisRaster): Promise<Raster> {
  const data = await fromRaster(image).resize(SAMPLE_SIDE, SAMPLE_SIDE, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
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

