import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Env } from './env.js';
import { deriveImage } from './images/derived.js';
import { ImageRejected } from './images/decode.js';
import { dedupeFaces, type FaceDetector } from './images/faces.js';
import { computeFingerprints, RobustIndex, type Fingerprints } from './images/robust.js';
import { replaceSimilarityEvidence, type NewEvidence } from './repo/evidence.js';
import { fromJson } from './repo/json.js';
import { listReferenceEntries } from './repo/knowledge.js';
import { getSubmissionRow, listFingerprints, saveAnalysis, saveAnalysisFailure, type FaceRecord } from './repo/submissions.js';
import { recomputeRisk } from './risk.js';
import { WATCHLIST_CONFIRMED } from './vocabulary.js';

/**
 * Local analysis of a submitted image, before any provider is involved: fingerprints, a derived
 * (metadata-free) copy, faces, then similarity with other submissions, attention candidates and
 * the confirmed watchlist, and the risk that follows.
 */
export interface Analyzer {
  faces: FaceDetector;
  /** Fingerprints of every analysed submission, loaded from the database on first use. */
  submissionIndex(env: Env): Promise<SubmissionIndex>;
  close(): Promise<void>;
}

export interface SubmissionIndex {
  index: RobustIndex<string>;
  fingerprints: Map<string, Fingerprints>;
}

export function createAnalyzer(faces: FaceDetector): Analyzer {
  let loaded: Promise<SubmissionIndex> | undefined;
  return {
    faces,
    submissionIndex(env) {
      loaded ??= (async () => {
        const index = new RobustIndex<string>();
        const fingerprints = new Map<string, Fingerprints>();
        for (const row of await listFingerprints(env.db)) {
          const fp = storedFingerprints(row.phash, row.fingerprints);
          index.add(row.id, fp);
          fingerprints.set(row.id, fp);
        }
        return { index, fingerprints };
      })();
      return loaded;
    },
    close: () => faces.close(),
  };
}

/** A row's fingerprints column; a row without one still matches on its bare pHash. */
export function storedFingerprints(phash: string, json: string | null): Fingerprints {
  const fp = fromJson<Fingerprints | null>(json, null);
  return fp && fp.phash === phash && fp.variants ? fp : { phash, variants: {} };
}

export async function readSubmissionImage(env: Env, file: string): Promise<Buffer> {
  return readFile(join(env.paths.submissionsDir, file));
}

/** Analyses one stored submission; an image that cannot be decoded marks it failed with the reason. */
export async function analyseSubmission(env: Env, id: string): Promise<void> {
  const row = await getSubmissionRow(env.db, id);
  if (!row) return;
  const now = () => env.clock.now().toISOString();
  const maxPixels = env.config.SVC_MAX_IMAGE_PIXELS;
  try {
    const bytes = await readSubmissionImage(env, row.file);
    const fingerprints = await computeFingerprints(bytes, maxPixels);
    const derived = await deriveImage(bytes, maxPixels);
    const derivedPath = `derived/${id}.${derived.format === 'png' ? 'png' : 'jpg'}`;
    const target = join(env.paths.dataDir, derivedPath);
    await writeFile(`${target}.tmp`, derived.bytes);
    await rename(`${target}.tmp`, target);
    let faces: FaceRecord[] = [];
    let faceError: string | null = null;
    try {
      faces = dedupeFaces(await env.analyzer.faces.detect(bytes));
    } catch (error) {
      faceError = `face detection failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    await saveAnalysis(env.db, id, { phash: fingerprints.phash, fingerprints, faces, derived_path: derivedPath, analysis_error: faceError }, now());
    const { index, fingerprints: all } = await env.analyzer.submissionIndex(env);
    index.add(id, fingerprints);
    all.set(id, fingerprints);
  } catch (error) {
    const reason = error instanceof ImageRejected ? error.reason : `analysis failed: ${error instanceof Error ? error.message : String(error)}`;
    await saveAnalysisFailure(env.db, id, reason, now());
    const { index, fingerprints } = await env.analyzer.submissionIndex(env);
    index.remove(id);
    fingerprints.delete(id);
  }
}

interface ReferenceEntry {
  id: string;
  submission_id: string;
  state: string;
  fingerprints: Fingerprints;
}

/** Attention candidates and watchlist entries (never excluded ones), indexed for this run. */
async function referenceIndex(env: Env): Promise<{ index: RobustIndex<string>; entries: Map<string, ReferenceEntry> }> {
  const index = new RobustIndex<string>();
  const entries = new Map<string, ReferenceEntry>();
  for (const row of await listReferenceEntries(env.db)) {
    const entry = { id: row.id, submission_id: row.submission_id, state: row.state, fingerprints: storedFingerprints(row.phash, row.fingerprints) };
    entries.set(row.id, entry);
    index.add(row.id, entry.fingerprints);
  }
  return { index, entries };
}

/**
 * Recomputes the internal, attention and watchlist evidence of the given submissions and their
 * risk. Operator marks on evidence found again are kept. The decision is never touched.
 */
export async function refreshSimilarity(env: Env, ids: Iterable<string>): Promise<void> {
  const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
  const { index, fingerprints } = await env.analyzer.submissionIndex(env);
  const references = await referenceIndex(env);
  for (const id of new Set(ids)) {
    const row = await getSubmissionRow(env.db, id);
    if (!row) continue;
    const now = env.clock.now().toISOString();
    const fp = fingerprints.get(id);
    const evidence: NewEvidence[] = [];
    if (fp) {
      for (const match of index.query(fp, threshold)) {
        if (match.key === id) continue;
        const other = await getSubmissionRow(env.db, match.key);
        if (!other) continue;
        evidence.push({
          source: 'internal',
          kind: 'submission_match',
          group: 'internal',
          title: other.title,
          local_media_path: other.file,
          similarity: match.plainSimilarity,
          matched: true,
          match_transform: match.transform,
          confidence: match.similarity,
          matched_submission_id: other.id,
        });
      }
      for (const match of references.index.query(fp, threshold)) {
        const entry = references.entries.get(match.key)!;
        if (entry.submission_id === id) continue;
        const other = await getSubmissionRow(env.db, entry.submission_id);
        const confirmed = entry.state === WATCHLIST_CONFIRMED;
        evidence.push({
          source: 'watchlist',
          kind: confirmed ? 'watchlist_entry' : 'attention_candidate',
          group: confirmed ? 'watchlist' : 'attention',
          title: other?.title ?? entry.submission_id,
          local_media_path: other?.file ?? null,
          similarity: match.plainSimilarity,
          matched: true,
          match_transform: match.transform,
          confidence: match.similarity,
          matched_submission_id: entry.submission_id,
          knowledge_entry_id: entry.id,
        });
      }
    }
    await replaceSimilarityEvidence(env.db, id, evidence, now);
    await recomputeRisk(env.db, id, now);
  }
}
