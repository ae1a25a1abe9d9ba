import type { MatchFields, NewEvidence } from '../repo/evidence.js';

/** A web candidate's verdict: its image downloaded, kept and compared with the submission. */
export interface Verification {
  imageUrl: string;
  localMediaPath: string | null;
  /** The plain pHash similarity, the number SPEC's threshold is about. */
  similarity: number | null;
  matched: boolean;
  /** How it matched, as stored on the evidence; empty when it did not. */
  match: MatchFields;
  error: { code: string; message: string } | null;
}

/**
 * The evidence fields a verdict decides, the same for web detection, image and web searches and
 * manual search: a verified match is a `web_match`, anything else (no candidate verified either) a
 * `web_related` result.
 */
export function verdictFields(
  v: Verification | null | undefined,
): Pick<NewEvidence, 'group' | 'local_media_path' | 'similarity' | 'matched' | 'error' | keyof MatchFields> {
  return {
    group: v?.matched ? 'web_match' : 'web_related',
    local_media_path: v?.localMediaPath,
    similarity: v?.similarity,
    matched: v?.matched,
    ...v?.match,
    error: v?.error,
  };
}
