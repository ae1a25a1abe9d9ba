import { createHash } from 'node:crypto';
import type { Env } from '../env.js';
import { similarity } from '../images/phash.js';
import { matchFingerprints, type Fingerprints } from '../images/robust.js';
import { downloadImage, downloadSettings } from '../net/download.js';
import { findPageImages } from '../net/page-images.js';

/**
 * Verification of web candidates: each image is downloaded under the safe-download rules, kept
 * under data/evidence/<submission>/, and compared with the submission's fingerprints.
 */
export interface Verification {
  imageUrl: string;
  localMediaPath: string | null;
  similarity: number | null;
  matched: boolean;
  transform: string | null;
  error: { code: string; message: string } | null;
}

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', gif: 'gif', svg: 'svg', avif: 'avif', tiff: 'tif', heif: 'heif' };

export async function verifyImage(env: Env, submissionId: string, reference: Fingerprints, imageUrl: string): Promise<Verification> {
  const downloaded = await downloadImage(imageUrl, { ...downloadSettings(env.config, env.egress), probe: env.images.probe });
  if (!downloaded.ok) return { imageUrl, localMediaPath: null, similarity: null, matched: false, transform: null, error: downloaded.error };
  const name = `${createHash('sha256').update(downloaded.bytes).digest('hex').slice(0, 24)}.${EXTENSIONS[downloaded.format] ?? 'img'}`;
  const localMediaPath = `evidence/${submissionId}/${name}`;
  await env.blobs.put(localMediaPath, downloaded.bytes);
  try {
    const candidate = await env.images.fingerprints(downloaded.bytes);
    const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
    const match = matchFingerprints(candidate, reference, threshold);
    return {
      imageUrl,
      localMediaPath,
      // The plain pHash similarity is the number shown; the transform says how a copy matched.
      similarity: match ? match.plainSimilarity : similarity(candidate.phash, reference.phash),
      matched: match !== null,
      transform: match?.transform ?? null,
      error: null,
    };
  } catch (error) {
    return { imageUrl, localMediaPath, similarity: null, matched: false, transform: null, error: { code: 'not_an_image', message: error instanceof Error ? error.message : String(error) } };
  }
}

/** The representative images of a result page (og:image, twitter:image, img), or the failure. */
export async function pageImageCandidates(env: Env, pageUrl: string): Promise<{ urls: string[]; error: { code: string; message: string } | null }> {
  const found = await findPageImages(pageUrl, downloadSettings(env.config, env.egress), env.config.SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT);
  return found.ok ? { urls: found.candidates, error: null } : { urls: [], error: found.error };
}
