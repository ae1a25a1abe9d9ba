import { phash, similarity } from './images/phash.js';
import { SimilarityIndex } from './images/similarity-index.js';

/** What the service stores per image to find copies of it. */
export interface Fingerprints {
  phash: string;
}

export interface Match<K> {
  key: K;
  similarity: number;
  transform: string;
}

export async function computeFingerprints(image: Buffer, maxPixels?: number): Promise<Fingerprints> {
  return { phash: await phash(image, maxPixels) };
}

/** Similarity and how it matched, or null below the threshold. */
export function matchFingerprints(query: Fingerprints, reference: Fingerprints, threshold: number): { similarity: number; transform: string } | null {
  const s = similarity(query.phash, reference.phash);
  return s >= threshold ? { similarity: s, transform: 'identity' } : null;
}

/** Threshold 0.9 allows 6 differing bits of 64. */
const maxDistance = (threshold: number) => Math.max(0, Math.min(64, Math.floor((1 - threshold) * 64 + 1e-9)));

export class MatchIndex<K> {
  private readonly index = new SimilarityIndex<K>();

  add(key: K, fp: Fingerprints): void {
    this.index.add(key, fp.phash);
  }

  remove(key: K): void {
    this.index.remove(key);
  }

  query(fp: Fingerprints, threshold: number): Match<K>[] {
    return this.index
      .query(fp.phash, maxDistance(threshold))
      .map((m) => ({ key: m.key, similarity: 1 - m.distance / 64, transform: 'identity' }));
  }
}
