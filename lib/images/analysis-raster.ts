import sharp, { type Sharp } from 'sharp';
import { decodeFailure, decodeOptions } from './decode.js';
import { SAMPLE_SIDE } from './raster.js';
import { THUMBNAIL_SIDE } from './thumbnail.js';

/**
 * The one decode an analysis makes of an image: the fingerprints' luma sample (luma.ts), the
 * thumbnail (thumbnail.ts) and the face detector's input (faces.ts) are each resampled from it,
 * instead of each decoding the file again. Only a JPEG's pHash reads the file itself (its DC grid,
 * jpeg-dc.ts), which costs no pixel decode.
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
 * Decodes the image once, shrunk on load (a JPEG decodes at 1/2-1/8 scale inside libjpeg) to the
 * smallest raster every consumer can be made from without enlarging: the luma sample is
 * SAMPLE_SIDE on each side, the thumbnail THUMBNAIL_SIDE on its longer side, the face detector's
 * input 192 px on its longer side. An image already smaller stays as it is. The linear kernel is the luma
 * sample's own: along the shorter side the sample then gets the same numbers as from its own
 * decode, and the longer side is resampled twice instead of once.
 */
export async function decodeForAnalysis(bytes: Buffer, maxPixels?: number): Promise<AnalysisRaster> {
  try {
    const image = sharp(bytes, decodeOptions(maxPixels));
    const metadata = await image.metadata();
    const originalWidth = metadata.autoOrient?.width ?? metadata.width;
    const originalHeight = metadata.autoOrient?.height ?? metadata.height;
    const scale = Math.max(SAMPLE_SIDE / Math.min(originalWidth, originalHeight), THUMBNAIL_SIDE / Math.max(originalWidth, originalHeight));
    if (scale < 1) {
      image.resize({ width: Math.round(originalWidth * scale), height: Math.round(originalHeight * scale), fit: 'fill', kernel: 'linear' });
    }
    const { data, info } = await image
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected an RGB raster, got ${info.channels} channels`);
    return { pixels: data, width: info.width, height: info.height, originalWidth, originalHeight };
  } catch (error) {
    throw decodeFailure(error);
  }
}

/** The raster as a sharp input, for the resampling each consumer does (no decode, no metadata). */
export function fromRaster(raster: AnalysisRaster): Sharp {
  return sharp(raster.pixels, { raw: { width: raster.width, height: raster.height, channels: 3 } });
}
