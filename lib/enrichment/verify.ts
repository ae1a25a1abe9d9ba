import { similarity } from '../images/phash.js';
import { sourceOf } from '../images/source.js';
import { matchFingerprints, type Fingerprints } from '../images/robust.js';
import { downloadImage, downloadSettings } from '../net/download.js';
import { findPageImages } from '../net/page-images.js';
import { checkGeometry, hashMatchFields, hashMatchStands } from '../matching/analysis.js';
import { geometricMatch } from '../repo/evidence.js';
import type { Verification } from '../matching/verdict.js';
import { evidenceMediaKey } from '../blobs/keys.js';
import type { Env, ImageSource } from '../ports.js';

/**
 * Verification of web candidates: each image is downloaded under the safe-download rules, kept
 * under data/evidence/<submission>/, compared with the submission's fingerprints (the SPEC pHash
 * and the region hashes) and, unless it is the same picture as it stands, checked geometrically
 * (local features and a fitted transform: a crop beyond the hash windows, a rotation, the picture
 * inside a collage or a screenshot, a photo of a screen).
 */
/** The submission a candidate is compared with: its image as read, and as the geometric check takes it. */
export interface Reference {
  fingerprints: Fingerprints;
  image: Buffer;
  source: ImageSource;
}

/** A reference, its image hashed once for all the candidates it is checked against. */
export function referenceOf(fingerprints: Fingerprints, image: Buffer): Reference {
  return { fingerprints, image, source: sourceOf(image) };
}

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', svg: 'svg', avif: 'avif', tiff: 'tif', heif: 'heif' };

export async function verifyImage(env: Env, submissionId: string, reference: Reference, imageUrl: string): Promise<Verification> {
  const downloaded = await downloadImage(imageUrl, { ...downloadSettings(env.config, env.egress), probe: env.images.probe });
  if (!downloaded.ok) return { imageUrl, localMediaPath: null, similarity: null, matched: false, match: {}, error: downloaded.error };
  const query = sourceOf(downloaded.bytes);
  const name = `${query.sha256.slice(0, 24)}.${EXTENSIONS[downloaded.format] ?? 'img'}`;
  const localMediaPath = evidenceMediaKey(submissionId, name);
  await env.blobs.put(localMediaPath, downloaded.bytes);
  let candidate: Fingerprints;
  try {
    candidate = await env.images.fingerprints(downloaded.bytes);
  } catch (error) {
    return {
      imageUrl,
      localMediaPath,
      similarity: null,
      matched: false,
      match: {},
      error: { code: 'not_an_image', message: error instanceof Error ? error.message : String(error) },
    };
  }
  const plain = similarity(candidate.phash, reference.fingerprints.phash);
  const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
  const hashed = matchFingerprints(candidate, reference.fingerprints, threshold);
  // The same picture as it stands (by the SPEC pHash) has nothing left for geometry to find.
  const asItStands = hashed?.transform === 'identity' && hashed.plainSimilarity >= threshold;
  const geometry = asItStands ? null : await checkGeometry(env, query, reference.source, { image_url: imageUrl });
  const confirmed = geometry?.confirmed ? geometry : null;
  // A hash match keeps its name (SPEC's pHash decides first) unless the region hashes alone made it
  // and geometry finds the images disjoint; geometry adds where the regions are.
  const stands = hashed !== null && hashMatchStands(hashed, threshold, geometry);
  const match = stands ? hashMatchFields(hashed, geometry) : confirmed ? geometricMatch(confirmed) : {};
  return { imageUrl, localMediaPath, similarity: plain, matched: Boolean(stands || confirmed), match, error: null };
}

/** The representative images of a result page (og:image, twitter:image, img), or the failure. */
export async function pageImageCandidates(env: Env, pageUrl: string): Promise<{ urls: string[]; error: { code: string; message: string } | null }> {
  const found = await findPageImages(pageUrl, downloadSettings(env.config, env.egress), env.config.SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT);
  return found.ok ? { urls: found.candidates, error: null } : { urls: [], error: found.error };
}
