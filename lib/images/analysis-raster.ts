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

/** A part of the upright image decoded at a scale: `area` is where it lies in the image's pixels. */
export interface DetailRaster {
  pixels: Buffer;
  width: number;
  height: number;
  area: Area;
}

/**
 * The image decoded at `scale` of its upright size (at most 1), cut to `area`, for the face
 * detector's look at people too small in the analysis raster. Shrunk first, then cut: libvips
 * shrinks a JPEG on load (its DCT scaled by 1/2 to 1/8) and, reading it in sequence, decodes its
 * rows only down to the area's bottom, so a picture of many megapixels, or heads at its top, cost
 * a fraction of its full decode. The area returned is the one the pixels cover (clamped to the
 * image, widened to whole pixels of the shrunk image, so not always whole pixels of the image).
 */
/** The part of the area inside a width x height image, in whole pixels, at least one pixel. */
function clampArea(area: Area, width: number, height: number): Area {
  const left = Math.min(width - 1, Math.max(0, Math.floor(area.left)));
  const top = Math.min(height - 1, Math.max(0, Math.floor(area.top)));
  const right = Math.max(left + 1, Math.min(width, Math.ceil(area.left + area.width)));
  const bottom = Math.max(top + 1, Math.min(height, Math.ceil(area.top + area.height)));
  return { left, top, width: right - left, height: bottom - top };
}

// A JPEG decodes at 1/2, 1/4 or 1/8 of its size inside libjpeg when asked for no more; sharp does so
// only for a resize of the whole image, not of a part cut out first.
const SHRINK_ON_LOAD = 0.5;

export async function decodeDetail(bytes: Buffer, scale: number, area: Area, maxPixels?: number): Promise<DetailRaster> {
  try {
    const image = sharp(bytes, decodeOptions(maxPixels));
    const metadata = await image.metadata();
    const originalWidth = metadata.autoOrient?.width ?? metadata.width;
    const originalHeight = metadata.autoOrient?.height ?? metadata.height;
    const clamped = clampArea(area, originalWidth, originalHeight);
    let covered: Area;
    if (scale > SHRINK_ON_LOAD) {
      // No shrink on load to lose: cut first, and only the part is resampled.
      const width = Math.max(1, Math.round(clamped.width * scale));
      const height = Math.max(1, Math.round(clamped.height * scale));
      image.extract(clamped);
      if (width < clamped.width) image.resize({ width, height, fit: 'fill' });
      covered = clamped;
    } else {
      const width = Math.max(1, Math.round(originalWidth * scale));
      const height = Math.max(1, Math.round(originalHeight * scale));
      const scaleX = width / originalWidth;
      const scaleY = height / originalHeight;
      const part = clampArea(
        {
          left: Math.floor(clamped.left * scaleX),
          top: Math.floor(clamped.top * scaleY),
          width: Math.ceil((clamped.left + clamped.width) * scaleX) - Math.floor(clamped.left * scaleX),
          height: Math.ceil((clamped.top + clamped.height) * scaleY) - Math.floor(clamped.top * scaleY),
        },
        width,
        height,
      );
      image.resize({ width, height, fit: 'fill' }).extract(part);
      covered = { left: part.left / scaleX, top: part.top / scaleY, width: part.width / scaleX, height: part.height / scaleY };
    }
    const { data, info } = await image.flatten({ background: '#ffffff' }).toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected an RGB raster, got ${info.channels} channels`);
    return { pixels: data, width: info.width, height: info.height, area: covered };
  } catch (error) {
    throw decodeFailure(error);
  }
}
