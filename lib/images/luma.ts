import { fromRaster, type AnalysisRaster } from './analysis-raster.js';
import type { LumaGrid } from './jpeg-dc.js';
import { SAMPLE_SIDE, orientationAxes, orientPixels, resample, type Raster } from './raster.js';

/**
 * The grayscale every fingerprint is computed from: Rec. 601 luma (0.299 R + 0.587 G + 0.114 B
 * of the gamma-encoded values), the Y that JPEG itself stores and the classic pHash's grayscale,
 * reduced by area averaging. Two sources give the same numbers to within rounding:
 * - a JPEG's own 1/8-scale luma grid (jpeg-dc.ts, read in worker threads), when the reader
 *   handles the file;
 * - otherwise a 256x256 RGB sample (linear kernel) of the analysis raster (analysis-raster.ts),
 *   converted here, or the raster's luma area-averaged when it is smaller than the sample.
 */

/**
 * The square luma sample of the image's analysis raster. The aspect ratio is dropped, as the pHash
 * drops it: regions are fractions of the image, so a region cuts the same content at any aspect.
 *
 * A raster under SAMPLE_SIDE on either side is area-averaged here instead: libvips enlarging one
 * axis places the other's samples off-centre, so its sample of a mirrored picture is not the
 * mirror of the picture's sample (6-33 grey levels apart on average on a sine pattern, 384x191 to
 * 200x256), and a mirrored page of text kept its region keys 4-8 bits from the original's, past
 * the index lookup. Area averaging weighs each side alike, so mirrors and quarter turns give the
 * same sample mirrored or turned, and the keys derived from it agree bit for bit.
 */
export async function lumaSample(image: AnalysisRaster): Promise<Raster> {
  const square = { left: 0, top: 0, right: SAMPLE_SIDE, bottom: SAMPLE_SIDE };
  if (image.width < SAMPLE_SIDE || image.height < SAMPLE_SIDE) {
    const whole = { width: image.width, height: image.height, data: luma(image.pixels), window: { left: 0, top: 0, right: image.width, bottom: image.height } };
    return { width: SAMPLE_SIDE, height: SAMPLE_SIDE, data: resample(whole, whole.window, SAMPLE_SIDE), window: square };
  }
  const data = await fromRaster(image).resize(SAMPLE_SIDE, SAMPLE_SIDE, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
  if (data.length !== SAMPLE_SIDE * SAMPLE_SIDE * 3) throw new Error(`lumaSample expected ${SAMPLE_SIDE * SAMPLE_SIDE} RGB pixels, got ${data.length} bytes`);
  return { width: SAMPLE_SIDE, height: SAMPLE_SIDE, data: luma(data), window: square };
}

/** Rec. 601 luma of RGB pixels, 3 bytes each. */
export function luma(rgb: Uint8Array): Float64Array {
  const out = new Float64Array(rgb.length / 3);
  for (let i = 0; i < out.length; i++) out[i] = 0.299 * rgb[i * 3] + 0.587 * rgb[i * 3 + 1] + 0.114 * rgb[i * 3 + 2];
  return out;
}

/**
 * The JPEG's luma grid (readJpeg), upright per its EXIF orientation, or null when libvips must
 * decode: not a JPEG the grid reader handles, over the pixel limit (libvips then refuses it with
 * the usual reason), or under 256 px on a side, where 8x8 blocks are too coarse for a 32x32 sample.
 */
export function jpegLuma(grid: LumaGrid | null): Raster | null {
  if (!grid || grid.imageWidth < 256 || grid.imageHeight < 256) return null;
  return orient(grid);
}

/**
 * The grid upright per its EXIF orientation (orientPixels). The last column and row of blocks may
 * hold fewer than 8 image pixels; the window keeps track of where they land.
 */
function orient(grid: LumaGrid): Raster {
  const { width, height, orientation } = grid;
  const upright = orientPixels(grid.data, width, height, 1, orientation);
  const { flipX, flipY, transposed } = orientationAxes(orientation);
  const spanX = (transposed ? grid.imageHeight : grid.imageWidth) / 8;
  const spanY = (transposed ? grid.imageWidth : grid.imageHeight) / 8;
  return {
    width: upright.width,
    height: upright.height,
    data: upright.data,
    window: {
      left: flipX ? upright.width - spanX : 0,
      right: flipX ? upright.width : spanX,
      top: flipY ? upright.height - spanY : 0,
      bottom: flipY ? upright.height : spanY,
    },
  };
}
