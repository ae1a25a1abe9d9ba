import { probeImage } from './decode.js';
import { deriveImage } from './derived.js';
import { createFaceDetector, cropFaces, dedupeFaces } from './faces.js';
import { computeFingerprints } from './fingerprint.js';
import { settle, type ImageService } from './service.js';
import { makeThumbnail } from './thumbnail.js';

const asBuffer = (bytes: Uint8Array) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/**
 * The images port in this process: fingerprints, faces and the thumbnail of one image side by side,
 * each off the event loop (the JPEG reader's and the face model's worker threads, libvips' pool).
 */
export function localImageService(maxPixels: number): ImageService {
  const faces = createFaceDetector({ maxPixels });
  return {
    async analyse(bytes) {
      const image = asBuffer(bytes);
      const [fingerprints, found, thumbnail] = await Promise.all([
        computeFingerprints(image, maxPixels),
        settle(faces.detect(image).then(dedupeFaces)),
        settle(makeThumbnail(image, maxPixels)),
      ]);
      return { fingerprints, faces: found, thumbnail };
    },
    fingerprints: (bytes) => computeFingerprints(asBuffer(bytes), maxPixels),
    probe: (bytes) => probeImage(asBuffer(bytes), maxPixels),
    derive: (bytes) => deriveImage(asBuffer(bytes), maxPixels),
    cropFaces: (bytes, found) => cropFaces(asBuffer(bytes), found, maxPixels),
    close: () => faces.close(),
  };
}
