import sharp, { type Metadata, type SharpOptions } from 'sharp';
import { probeHeader, withinLimit } from './header.js';
import { ImageRejected } from './rejected.js';

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'svg' | 'avif' | 'tiff' | 'heif';

export interface ImageProbe {
  format: ImageFormat;
  width: number;
  height: number;
}

const ACCEPTED_FORMATS: ReadonlySet<string> = new Set(['jpeg', 'png', 'webp', 'gif', 'svg', 'tiff', 'heif']);

/**
 * Reads the real format and size from the image header (the file name is never trusted).
 * Only the header is parsed, so an oversized image is refused before any pixel is decoded. JPEG
 * and PNG headers are read without libvips when they can be (header.ts).
 */
export async function probeImage(bytes: Buffer, maxPixels: number): Promise<ImageProbe> {
  if (bytes.length === 0) throw new ImageRejected('not an image (the file is empty)');
  const quick = probeHeader(bytes, maxPixels);
  if (quick) return quick;
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new ImageRejected('not an image');
  }
  if (!ACCEPTED_FORMATS.has(metadata.format)) {
    throw new ImageRejected(`unsupported image format "${metadata.format}"`);
  }
  // The bundled libvips decodes AV1 only; HEIC would pass the header and fail later, less clearly.
  if (metadata.format === 'heif' && metadata.compression === 'hevc') {
    throw new ImageRejected('unsupported image format "heic" (HEVC-compressed HEIF cannot be decoded)');
  }
  // sharp reports AVIF as HEIF with AV1 compression; operators know it as AVIF.
  const format = (metadata.format === 'heif' && metadata.compression === 'av1' ? 'avif' : metadata.format) as ImageFormat;
  const width = metadata.autoOrient?.width ?? metadata.width;
  const height = metadata.autoOrient?.height ?? metadata.height;
  if (!width || !height) throw new ImageRejected('image has zero width or height');
  return withinLimit({ format, width, height }, maxPixels);
}

/** The pixel limit of a decode whose caller gives none: sharp's own default. */
export const DEFAULT_MAX_PIXELS = 0x3fff * 0x3fff;

/**
 * Options for every pixel decode. `limitInputPixels` is the decompression-bomb guard: libvips
 * refuses to decode past it even when a caller skipped probeImage.
 */
export function decodeOptions(maxPixels?: number): SharpOptions {
  return {
    limitInputPixels: maxPixels ?? DEFAULT_MAX_PIXELS,
    sequentialRead: true,
    autoOrient: true,
    // 'error' rather than sharp's stricter 'warning': a file the decoder reads despite a warning
    // stays usable evidence, while damaged and truncated files are still refused.
    failOn: 'error',
  };
}

/** Turns a libvips failure while decoding into the operator-readable rejection. */
export function decodeFailure(error: unknown): ImageRejected {
  if (error instanceof ImageRejected) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/unsupported image format|Input Buffer is empty/i.test(message)) return new ImageRejected('not an image');
  if (/pixel limit/i.test(message)) return new ImageRejected('image has more pixels than the limit');
  // libvips keeps its error text per process, not per decode: another image decoded at the same
  // moment can clear it, and sharp then says only "Unknown error". Say what is known instead.
  if (/^unknown error$/i.test(message.trim())) {
    return new ImageRejected('image could not be decoded: the decoder gave no reason (a damaged or cut-short file)');
  }
  return new ImageRejected(`image could not be decoded: ${message.split('\n')[0]}`);
}

/** The image as grey pixels of at most `side` px on its longer side. */
export async function decodeGrey(image: Buffer, side: number, maxPixels?: number): Promise<{ data: Uint8Array; width: number; height: number }> {
  try {
    const { data, info } = await sharp(image, decodeOptions(maxPixels))
      .resize(side, side, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 1) throw new Error(`expected one grey channel, got ${info.channels}`);
    return { data: new Uint8Array(data.buffer, data.byteOffset, info.width * info.height), width: info.width, height: info.height };
  } catch (error) {
    throw decodeFailure(error);
  }
}
