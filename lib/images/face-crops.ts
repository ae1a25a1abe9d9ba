import sharp, { type Metadata } from 'sharp';
import { clamp } from './boxes.mjs';
import { decodeFailure, decodeOptions } from './decode.js';
import type { Face, FaceBox } from './faces.js';

export type FaceCrop = { face: Face; ok: true; bytes: Buffer } | { face: Face; ok: false; error: string };

// Share of the box size added on each side of a crop, so the crop shows the whole head.
const CROP_MARGIN = 0.2;

function orientedSize(metadata: Metadata): { width: number; height: number } {
  return {
    width: metadata.autoOrient?.width ?? metadata.width,
    height: metadata.autoOrient?.height ?? metadata.height,
  };
}

/** The crop rectangle: the box plus margin, clamped to the image; refuses boxes that leave nothing. */
function cropRegion(box: FaceBox, image: { width: number; height: number }) {
  const values = [box.x, box.y, box.width, box.height];
  if (!values.every(Number.isFinite) || box.width <= 0 || box.height <= 0) {
    throw new Error(`face box ${JSON.stringify(box)} is degenerate`);
  }
  const marginX = box.width * CROP_MARGIN;
  const marginY = box.height * CROP_MARGIN;
  const left = clamp(Math.floor(box.x - marginX), 0, image.width);
  const top = clamp(Math.floor(box.y - marginY), 0, image.height);
  const right = clamp(Math.ceil(box.x + box.width + marginX), 0, image.width);
  const bottom = clamp(Math.ceil(box.y + box.height + marginY), 0, image.height);
  if (right - left < 1 || bottom - top < 1) {
    throw new Error(`face box ${JSON.stringify(box)} lies outside the ${image.width}x${image.height} image`);
  }
  return { left, top, width: right - left, height: bottom - top };
}

async function cropFace(image: Buffer, face: Face, size: { width: number; height: number }, maxPixels?: number): Promise<Buffer> {
  const region = cropRegion(face.box, size);
  try {
    // JPEG output without keepMetadata/withMetadata: sharp writes no EXIF, GPS or XMP.
    return await sharp(image, decodeOptions(maxPixels)).extract(region).flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
  } catch (error) {
    throw decodeFailure(error);
  }
}

/**
 * One metadata-free JPEG per face (box plus margin). Every crop stands alone: a box that cannot be
 * cropped gets its own error and the others still get their bytes.
 */
export async function cropFaces(image: Buffer, faces: Face[], maxPixels?: number): Promise<FaceCrop[]> {
  let size: { width: number; height: number };
  try {
    size = orientedSize(await sharp(image, decodeOptions(maxPixels)).metadata());
  } catch (error) {
    const { reason } = decodeFailure(error);
    return faces.map((face) => ({ face, ok: false, error: reason }));
  }
  return Promise.all(
    faces.map((face) =>
      cropFace(image, face, size, maxPixels).then(
        (bytes): FaceCrop => ({ face, ok: true, bytes }),
        (error: unknown): FaceCrop => ({ face, ok: false, error: error instanceof Error ? error.message : String(error) }),
      ),
    ),
  );
}
