import sharp, { type Sharp } from 'sharp';
import { decodeFailure, decodeOptions } from './decode.js';
import type { LumaGrid } from './jpeg-dc.js';
import { readJpeg } from './jpeg-dc-pool.js';
import { analysisRasterSize, orientationAxes, orientPixels } from './raster.js';

/**
 * The one decode an analysis makes of an image: the fingerprints' luma sample (luma.ts), the
 * thumbnail (thumbnail.ts) and the face detector's input (faces.ts) are each resampled from it,
 * instead of each decoding the file again. A JPEG's pHash reads the file itself (its DC grid,
 * jpeg-dc.ts), which costs no pixel decode; a large JPEG's raster comes from that same read.
 */
export interface AnalysisRaster {
  /** RGB, 3 bytes a pixel, row-major, sRGB, upright per EXIF, transparency flattened on white. */
  pixels: Buffer;
  width: number;
  height: number;
  /** The upright image's own size: face boxes are given in it. */
  originalWidth: number;
  originalHeight: number;
}

/**
 * The image at its analysis raster's size (raster.ts: the smallest every consumer can be made from
 * without enlarging), or as it is when smaller. A JPEG of about 2,048 px or more on its shorter
 * side is made from its 1/8-scale colour image, which the read of its DC values (`jpeg`, read here
 * unless the caller has) already holds; anything else is decoded by libvips, shrunk on load (a
 * JPEG decodes at 1/2-1/8 scale inside libjpeg). Either is resampled with a linear kernel, the luma
 * sample's own: along the shorter side the sample then gets the same numbers as from its own
 * decode, and the longer side is resampled twice instead of once.
 */
export async function decodeForAnalysis(
  bytes: Buffer,
  maxPixels?: number,
  jpeg: Promise<LumaGrid | null> = readJpeg(bytes, maxPixels, true),
): Promise<AnalysisRaster> {
  const grid = await jpeg;
  if (grid?.colour) return fromColourImage(grid);
  try {
    const image = sharp(bytes, decodeOptions(maxPixels));
    const metadata = await image.metadata();
    const originalWidth = metadata.autoOrient?.width ?? metadata.width;
    const originalHeight = metadata.autoOrient?.height ?? metadata.height;
    const size = analysisRasterSize(originalWidth, originalHeight);
    if (size.width < originalWidth) image.resize({ ...size, fit: 'fill', kernel: 'linear' });
    const { data, info } = await image.flatten({ background: '#ffffff' }).toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected an RGB raster, got ${info.channels} channels`);
    return { pixels: data, width: info.width, height: info.height, originalWidth, originalHeight };
  } catch (error) {
    throw decodeFailure(error);
  }
}

/** The raster from a large JPEG's 1/8-scale colour image: stood upright, then resampled to size. */
async function fromColourImage(grid: LumaGrid): Promise<AnalysisRaster> {
  const colour = grid.colour!;
  const upright = orientPixels(colour.pixels, colour.width, colour.height, 3, grid.orientation);
  const { transposed } = orientationAxes(grid.orientation);
  const originalWidth = transposed ? grid.imageHeight : grid.imageWidth;
  const originalHeight = transposed ? grid.imageWidth : grid.imageHeight;
  const { data, info } = await sharp(upright.data, { raw: { width: upright.width, height: upright.height, channels: 3 } })
    .resize({ ...analysisRasterSize(originalWidth, originalHeight), fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: data, width: info.width, height: info.height, originalWidth, originalHeight };
}

/** The raster as a sharp input, for the resampling each consumer does (no decode, no metadata). */
export function fromRaster(raster: AnalysisRaster): Sharp {
  return sharp(raster.pixels, { raw: { width: raster.width, height: raster.height, channels: 3 } });
}

/** A part of the upright image, in its whole pixels. */
export interface Area {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** `area` of the upright image decoded at a scale: `width` x `height` RGB pixels. */
export interface DetailRaster {
  pixels: Buffer;
  width: number;
  height: number;
  area: Area;
}

/**
 * `area` of the image decoded at `scale` of its upright size (at most 1), for the face detector's
 * look at people too small in the analysis raster. Only the area is read: libvips decodes a JPEG's
 * rows as far as the area's bottom, and converts only its pixels (a 200 px square at the top of a
 * 2.6 MP JPEG costs a sixth of the whole decode); a JPEG shrinks on load, so a picture of many
 * megapixels costs a fraction of its full decode.
 */
export async function decodeDetail(bytes: Buffer, scale: number, area: Area, maxPixels?: number): Promise<DetailRaster> {
  try {
    const image = sharp(bytes, decodeOptions(maxPixels)).extract(area);
    const width = Math.max(1, Math.round(area.width * scale));
    const height = Math.max(1, Math.round(area.height * scale));
    if (width < area.width) image.resize({ width, height, fit: 'fill' });
    const { data, info } = await image.flatten({ background: '#ffffff' }).toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected an RGB raster, got ${info.channels} channels`);
    return { pixels: data, width: info.width, height: info.height, area };
  } catch (error) {
    throw decodeFailure(error);
  }
}
