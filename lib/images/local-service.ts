import { decodeForAnalysis } from './analysis-raster.js';
import { probeImage } from './decode.js';
import { deriveImage } from './derived.js';
import { readJpeg } from './jpeg-dc-pool.js';
import { cropFaces } from './face-crops.js';
import { createDetector } from './faces.js';
import { computeFingerprints } from './fingerprint.js';
import { confirmEdit, greyCopy, parseEdit, type Grey } from './edit-check.js';
import { computeGeometryFeatures, verifyGeometry, type GeometryFeatures, type GeometryResult } from './geometry.js';
import type { KeypointStore } from './keypoint-store.js';
import { settle } from './service.js';
import { makeThumbnail } from './thumbnail.js';
import type { ImageService, ImageSource } from '../ports.js';

/**
 * The images port in this process: fingerprints, faces and people, and the thumbnail of one image
 * side by side from one read of a JPEG's DC values and one decode (analysis-raster.ts), each off the
 * event loop (the JPEG reader's and the detection models' worker threads, libvips' pool). Keypoints
 * are kept in memory, and behind that in `keypoints` when the entry gives a store that the
 * deployment's other processes share (decision 0047).
 */
export function localImageService(maxPixels: number, { keypoints }: { keypoints?: KeypointStore } = {}): ImageService {
  const detector = createDetector({ maxPixels });
  const features = keptFeatures(maxPixels, keypoints);
  const greys = keptGreys(maxPixels);
  const verdicts = recentlyUsed<Promise<GeometryResult>>(KEPT_VERDICTS, (verdict) => verdict);
  return {
    async analyse(bytes) {
      // A refused image rejects the fingerprints with the decoder's reason, as the analysis's error.
      const jpeg = readJpeg(bytes, maxPixels, true);
      const decoded = decodeForAnalysis(bytes, maxPixels, jpeg);
      const [fingerprints, detections, thumbnail] = await Promise.all([
        computeFingerprints(bytes, maxPixels, jpeg, decoded),
        settle(decoded.then((raster) => detector.detect(bytes, raster))),
        settle(decoded.then(makeThumbnail)),
      ]);
      return { fingerprints, detections, thumbnail };
    },
    fingerprints: (bytes) => computeFingerprints(bytes, maxPixels),
    probe: (bytes) => probeImage(bytes, maxPixels),
    derive: (bytes) => deriveImage(bytes, maxPixels),
    cropFaces: (bytes, found) => cropFaces(bytes, found, maxPixels),
    matchGeometry(queryImage, referenceImage, edit) {
      const pair = `${queryImage.sha256} ${referenceImage.sha256} ${edit ?? ''}`;
      const found = verdicts.get(pair);
      if (found) return found;
      // The pixel check and the keypoints may each want a side's bytes: read once.
      const [query, reference] = [readOnce(queryImage), readOnce(referenceImage)];
      const byPixels = async () => (edit && parseEdit(edit) ? confirmEdit(await greys(query), await greys(reference), edit) : null);
      // Both sides' keypoints at once: each may be computed, read from the store or waited for.
      const keypoints = () => Promise.all([features(query, false), features(reference, true)]);
      const verdict = (async () => (await byPixels()) ?? verifyGeometry(...(await keypoints())))();
      // A failed check is not kept: the next call tries again.
      verdicts.set(pair, verdict);
      return verdict;
    },
    close: () => detector.close(),
  };
}

/** The image with its bytes read at most once, however many of the check's steps want them. */
function readOnce(image: ImageSource): ImageSource {
  let bytes: Promise<Buffer> | undefined;
  return { sha256: image.sha256, bytes: () => (bytes ??= image.bytes()) };
}

/**
 * Images whose keypoints are kept (up to 140 KB each, 9 MB in all; a collage's cells up to 140 KB
 * more each, decision 0043): an enrichment run checks all its candidates against one submission,
 * and a burst of near-identical submissions checks each new one against the closest earlier ones,
 * which come up again and again.
 */
const KEPT_FEATURES = 64;

/**
 * Verdicts of the last pairs checked, by both images' content: comparing a submission refreshes
 * the matches of every submission it matches, which checks the same pairs again and again in a
 * batch of edits of one picture (the check is deterministic for the same bytes).
 */
const KEPT_VERDICTS = 1024;

/**
 * The last `limit` values used, by key (a Map keeps insertion order, so the first key is the least
 * recently used). A value whose work (`pending`) fails is dropped: its next use computes it again.
 */
function recentlyUsed<V>(limit: number, pending: (value: V) => Promise<unknown>) {
  const kept = new Map<string, V>();
  return {
    get(key: string): V | undefined {
      const found = kept.get(key);
      if (found !== undefined) {
        kept.delete(key);
        kept.set(key, found);
      }
      return found;
    },
    set(key: string, value: V): void {
      pending(value).catch(() => kept.get(key) === value && kept.delete(key));
      kept.delete(key);
      kept.set(key, value);
      if (kept.size > limit) kept.delete(kept.keys().next().value!);
    },
  };
}

/**
 * Keypoints by image content, the last KEPT_FEATURES kept in memory, in front of the store when
 * there is one: what is not in memory is read from the store, and what is computed is written to
 * it. An image kept with its mirror image's keypoints also answers for it as a query (which needs
 * none); one kept without them is computed again when it is wanted as a reference.
 */
function keptFeatures(maxPixels: number, store?: KeypointStore): (image: ImageSource, mirror: boolean) => Promise<GeometryFeatures> {
  // A refused image is not kept: its error says what is wrong with the bytes, every time.
  const kept = recentlyUsed<{ mirror: boolean; features: Promise<GeometryFeatures> }>(KEPT_FEATURES, (entry) => entry.features);
  const stored = (image: ImageSource, mirror: boolean) => {
    const compute = async () => computeGeometryFeatures(await image.bytes(), maxPixels, { mirror });
    // The store names a picture by its SHA-256, as the source does.
    return store ? store.kept(image.sha256, mirror, compute) : compute();
  };
  return (image, mirror) => {
    const found = kept.get(image.sha256);
    if (found && (found.mirror || !mirror)) return found.features;
    const features = stored(image, mirror);
    kept.set(image.sha256, { mirror, features });
    return features;
  };
}

/**
 * Grey copies of the last KEPT_GREYS images (25 KB each) for the pixel check of an edit the region
 * hashes named (edit-check.ts): a picture with several edited copies is checked against each.
 */
const KEPT_GREYS = 256;

function keptGreys(maxPixels: number): (image: ImageSource) => Promise<Grey> {
  const kept = recentlyUsed<Promise<Grey>>(KEPT_GREYS, (grey) => grey);
  return (image) => {
    const found = kept.get(image.sha256);
    if (found) return found;
    const grey = image.bytes().then((bytes) => greyCopy(bytes, maxPixels));
    kept.set(image.sha256, grey);
    return grey;
  };
}
