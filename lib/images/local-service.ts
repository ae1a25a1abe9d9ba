import { probeImage } from './decode.js';
import { deriveImage } from './derived.js';
import { createFaceDetector, cropFaces, dedupeFaces } from './faces.js';
import { computeFingerprints } from './fingerprint.js';
import { settle, type ImageService } from './service.js';
import { makeThumbnail } from './thumbnail.js';

/**
 * The images port in this process: fingerprints, faces and the thumbnail of one image side by side,
 * each off the event loop (the JPEG reader's and the face model's worker threads, libvips' pool).
 */
export function localImageService(maxPixels: number): ImageService {
  const faces = createFaceDetector({ maxPixels });
  return {
    async analyse(bytes) {
      const [fingerprints, found, thumbnail] = await Promise.all([
        computeFingerprints(bytes, maxPixels),
        settle(faces.detect(bytes).then(dedupeFaces)),
        settle(makeThumbnail(bytes, maxPixels)),
      ]);
      return { fingerprints, faces: found, thumbnail };
    },
    fingerprints: (bytes) => computeFingerprints(bytes, maxPixels),
    probe: (bytes) => probeImage(bytes, maxPixels),
    derive: (bytes) => deriveImage(bytes, maxPixels),
    cropFaces: (bytes, found) => cropFaces(bytes, found, maxPixels),
    close: () => faces.close(),
  };
}
