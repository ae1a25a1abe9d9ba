import sharp from 'sharp';
import { decodeFailure, decodeOptions } from './decode.js';

export interface DerivedImage {
  bytes: Buffer;
  format: 'jpeg' | 'png';
  width: number;
  height: number;
}

const JPEG_QUALITY = 88;

/**
 * The only form in which an image may leave the service (SPEC: data-sending boundaries).
 * Pixels are decoded and re-encoded, upright per EXIF orientation, converted to sRGB; sharp writes
 * no EXIF, GPS, XMP, IPTC, ICC or text chunks unless asked to, and nothing here asks. SVG is
 * rasterised, so no markup or script ever travels; transparency survives as PNG, everything else
 * becomes JPEG. Animated images keep their first frame.
 */
export async function deriveImage(bytes: Buffer, maxPixels?: number): Promise<DerivedImage> {
  try {
    const image = sharp(bytes, decodeOptions(maxPixels));
    const { hasAlpha } = await image.metadata();
    const encoded = hasAlpha ? image.png() : image.jpeg({ quality: JPEG_QUALITY });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
    return { bytes: data, format: hasAlpha ? 'png' : 'jpeg', width: info.width, height: info.height };
  } catch (error) {
    throw decodeFailure(error);
  }
}
