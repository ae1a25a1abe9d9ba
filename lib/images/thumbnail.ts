import sharp from 'sharp';
import { decodeFailure, decodeOptions } from './decode.js';

/** The longest side of a thumbnail: sharp on the queue's rows and the watchlist's cards, a few KB each. */
export const THUMBNAIL_SIDE = 320;
const THUMBNAIL_QUALITY = 72;

/**
 * A small upright JPEG of the image for lists, so a page of 50 rows never loads 50 originals. JPEG
 * inputs shrink on load (libjpeg decodes at 1/2-1/8 scale), so a 3 MP photo costs a few ms.
 * Transparency is flattened on white; like every re-encode here it carries no metadata.
 */
export async function makeThumbnail(bytes: Buffer, maxPixels?: number): Promise<Buffer> {
  try {
    return await sharp(bytes, decodeOptions(maxPixels))
      .resize({ width: THUMBNAIL_SIDE, height: THUMBNAIL_SIDE, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: THUMBNAIL_QUALITY, mozjpeg: false })
      .toBuffer();
  } catch (error) {
    throw decodeFailure(error);
  }
}
