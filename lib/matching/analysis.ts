import { isStorageFull } from '../http/errors.js';
import { ImageRejected } from '../images/rejected.js';
import { RobustIndex, SlotQuery, type Fingerprints, type SlotProbe } from '../images/robust.js';
import { hasRights, readRightsMetadata, rightsMismatch, rightsText, type RightsMetadata } from '../images/rights-metadata.js';
import type { GeometryResult } from '../images/geometry.js';
import {
  geometricMatch,
  internalMatchPartners,
  matchRegionFields,
  replaceRightsEvidence,
  replaceSimilarityEvidence,
  type MatchFields,
  type NewEvidence,
} from '../repo/evidence.js';
import { submissionKey, thumbnailKey } from '../blobs/keys.js';
import { fromJson } from '../repo/json.js';
import { listReferenceEntries } from '../repo/knowledge.js';
import type { JobOutcome } from '../jobs/loops.js';
import { enqueueIndexJobStatement, enqueueJobStatement, type Job } from '../repo/jobs.js';
import { backfillFingerprintSlots, fingerprintSlotsStatements, submissionsFound, type FingerprintRow } from '../repo/fingerprint-slots.js';
import { withLease } from '../repo/leases.js';
import { getSubmissionRow, saveAnalysis, saveAnalysisFailure, type SubmissionRow } from '../repo/submissions.js';
import { serialized } from '../db/serial.js';
import { recomputeRisk, RIGHTS_KIND, RIGHTS_MISMATCH_KIND } from '../review/risk.js';
import { WATCHLIST_CONFIRMED } from '../vocabulary.js';
import type { Env, Settled } from '../ports.js';

/**
 * Local analysis of a submitted image, before any provider is involved: fingerprints, a derived
 * (metadata-free) copy, faces, then similarity with other submissions, attention candidates and
 * the confirmed watchlist, and the risk that follows.
 */
/** A row's fingerprints column; a row without one still matches on its bare pHash. */
export function storedFingerprints(phash: string, json: string | null): Fingerprints {
  const fp = fromJson<Fingerprints | null>(json, null);
  return fp && fp.phash === phash && fp.variants ? fp : { phash, variants: {} };
}

/** The submitted file's bytes (`file` is the contract's `images/<name>`). */
export async function readSubmissionImage(env: Env, file: string): Promise<Buffer> {
  const bytes = await env.blobs.get(submissionKey(file));
  if (!bytes) throw new Error(`the submitted file ${file} is gone`);
  return bytes;
}

/**
 * A thumbnail that cannot be kept is noted on the analysis. A full disk is not the thumbnail's
 * failure: it is thrown, and the job waits and runs again (lib/jobs/loops.ts).
 */
async function keepThumbnail(env: Env, path: string, bytes: Buffer): Promise<Settled<void>> {
  try {
    await env.blobs.put(path, bytes);
    return { ok: true, value: undefined };
  } catch (error) {
    if (isStorageFull(error)) throw error;
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Analyses one stored submission: fingerprints, faces and thumbnail side by side (each runs off the
 * event loop: the luma reader's and the face model's worker threads, libvips' thread pool). An image
 * that cannot be decoded, or a file that is gone, marks it failed with the reason, which is
 * returned; any other error is thrown. Nothing is stored when a reload recorded other bytes
 * meanwhile (their own analysis is queued).
 */
export async function analyseSubmission(env: Env, id: string): Promise<{ stored: boolean; failure: string | null }> {
  const row = await getSubmissionRow(env.db, id);
  if (!row) return { stored: false, failure: null };
  const now = () => env.clock.now().toISOString();
  const failed = async (reason: string) => ({ stored: await saveAnalysisFailure(env.db, id, row.sha256, reason, now()), failure: reason });
  const bytes = await env.blobs.get(submissionKey(row.file));
  if (!bytes) return failed(`the submitted file ${row.file} is gone`);
  try {
    const { fingerprints, detections, thumbnail } = await env.images.analyse(bytes);
    const thumbPath = thumbnailKey(id);
    const stored = thumbnail.ok ? await keepThumbnail(env, thumbPath, thumbnail.value) : thumbnail;
    const problems = [
      ...(detections.ok ? detections.value.notes.map((note) => `detection capped: ${note}`) : [`face and people detection failed: ${detections.error}`]),
      stored.ok ? null : `thumbnail failed: ${stored.error}`,
    ].filter((p): p is string => p !== null);
    const result = {
      phash: fingerprints.phash,
      fingerprints,
      faces: detections.ok ? detections.value.faces : [],
      people: detections.ok ? detections.value.people : [],
      thumb_path: stored.ok ? thumbPath : null,
      analysis_error: problems.length ? problems.join('; ') : null,
    };
    const saved = await saveAnalysis(env.db, id, row.sha256, result, now());
    // Read from the submitted bytes: the derived copy that leaves the service has none of these fields.
    if (saved) await saveRightsEvidence(env, id, row.submitter, await readRightsMetadata(bytes), now());
    return { stored: saved, failure: null };
  } catch (error) {
    // Only the image itself fails its analysis for good. Anything else (storage, the image service
    // out of reach) fails the job and leaves the submission pending, and owed work queues it again.
    if (error instanceof ImageRejected) return failed(error.reason);
    throw error;
  }
}

/**
 * The rights fields the file states about itself, as one piece of local evidence (group `rights`),
 * or none when it states none. Its kind says whether the creator or copyright holder it names is
 * someone other than the submitter (the risk signal). The same finding again keeps its row, so an
 * operator's mark stays; new bytes with other fields replace it.
 */
async function saveRightsEvidence(env: Env, id: string, submitter: string | null, rights: RightsMetadata, now: string): Promise<void> {
  const found: NewEvidence | null = hasRights(rights)
    ? {
        source: 'file_metadata',
        kind: rightsMismatch(rights, submitter) ? RIGHTS_MISMATCH_KIND : RIGHTS_KIND,
        group: 'rights',
        title: '파일 권리 표기',
        text: rightsText(rights),
      }
    : null;
  await replaceRightsEvidence(env.db, id, found, now);
}

/**
 * A registry entry's new submitter for the same bytes: the rights evidence and the risk follow
 * without a new analysis. A submission not yet analysed is left to its analysis, which reads the
 * submitter then.
 */
export async function refreshRightsEvidence(env: Env, id: string): Promise<void> {
  const row = await getSubmissionRow(env.db, id);
  if (row?.analysis_status !== 'done') return;
  const bytes = await env.blobs.get(submissionKey(row.file));
  if (!bytes) return;
  const now = env.clock.now().toISOString();
  await saveRightsEvidence(env, id, row.submitter, await readRightsMetadata(bytes), now);
  await recomputeRisk(env.db, id, now);
}

/**
 * Stores a submission's fingerprints in the similarity index (or takes it out when it has none),
 * then refreshes the similarity evidence of it and of every submission it matched before or
 * matches now, so both sides of a match show it. One comparison at a time across all jobs,
 * processes and Worker isolates (the lease; `serialized` only spares this process's own jobs from
 * polling it): the analyses run side by side, but a match found by the second to finish must not
 * be overwritten by the first one's older view, so whichever order they finish in, both show it.
 */
export async function compareSubmission(env: Env, id: string): Promise<void> {
  await serialized('similarity', () =>
    withLease(env.db, env.clock, 'similarity', async () => {
      const row = await getSubmissionRow(env.db, id);
      const fp = row?.analysis_status === 'done' && row.phash ? storedFingerprints(row.phash, row.fingerprints) : null;
      await env.db.batch(fingerprintSlotsStatements(env.db, id, fp));
      const before = await internalMatchPartners(env.db, id);
      await refreshSimilarity(env, [id]);
      await refreshSimilarity(env, new Set([...before, ...(await internalMatchPartners(env.db, id))]));
    }),
  );
}

const rowFingerprints = (row: FingerprintRow) => storedFingerprints(row.phash, row.fingerprints);

/**
 * The `analyse` job queued by a reload: analysis (unless a previous run already stored it, before a
 * crash), comparison, then the submission's enrichment job. Running it twice stores the same thing.
 */
export async function runAnalyseJob(env: Env, job: Job): Promise<JobOutcome> {
  if (!job.submission_id) return { status: 'failed', error: 'the job names no submission' };
  const id = job.submission_id;
  const row = await getSubmissionRow(env.db, id);
  if (!row) return { status: 'skipped' };
  const failure = row.analysis_status === 'pending' ? (await analyseSubmission(env, id)).failure : row.analysis_error;
  await compareSubmission(env, id);
  const queued = await enqueueJobStatement(env.db, 'enrich', id, {}, env.clock.now().toISOString()).all();
  if (queued.results.length > 0) await env.jobs.notify(1);
  const after = await getSubmissionRow(env.db, id);
  if (after?.analysis_status === 'failed') return { status: 'failed', error: failure ?? after.analysis_error ?? 'analysis failed' };
  return { status: 'done' };
}

/**
 * The `index` job migration 0014 queued: writes the slots of the submissions compared before it,
 * as many pages as one run (one Worker invocation) allows, then queues the next run until done.
 */
export async function runIndexJob(env: Env): Promise<JobOutcome> {
  if (await backfillFingerprintSlots(env.db, rowFingerprints)) return { status: 'done' };
  await enqueueIndexJobStatement(env.db, env.clock.now().toISOString()).run();
  await env.jobs.notify(1);
  return { status: 'done' };
}

/** How far below the threshold a plain pHash similarity still sends a pair to the geometric check. */
const NEAR_THRESHOLD = 0.1;
/**
 * Geometric checks per comparison, the closest candidates first. Each costs the other image's
 * keypoints and a fit (150-200 ms), inside the comparison lease that every analysis waits for: a
 * batch of near-identical photos (a burst, a set of edits of one picture) sent every new image to
 * dozens of checks, and ingest of such a batch fell to 0.5 images/s.
 */
const NEAR_CHECKS = 3;

/**
 * The geometric check of a candidate (`query`) against a submission (`reference`); null when it
 * cannot run. A failure of the check itself (not of the images, which their fingerprints already
 * accepted) is logged with `context` and leaves the hash verdict.
 */
export async function checkGeometry(env: Env, query: Buffer, reference: Buffer, context: Record<string, unknown>): Promise<GeometryResult | null> {
  try {
    return await env.images.matchGeometry(query, reference);
  } catch (error) {
    env.log.warn('geometric check failed', { ...context, error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

/**
 * Whether a hash match stands beside the geometric check of the same pair. The SPEC pHash decides
 * first: a match at its threshold always stands. One the region hashes alone made is refused when
 * the check finds the two images disjoint (both textured, nothing of one seen in the other): the
 * hashes then agreed on the layout, such as the black canvas two pale pictures turned by about the
 * same angle leave. Every such match is checked: the images port keeps recent keypoints and
 * verdicts, so a batch of edits of one picture, whose comparisons check the same pairs again as
 * each new image refreshes its partners, ingests faster than before the check (7.4 against 6.2
 * images/s, the ingest bench's variants corpus).
 */
export function hashMatchStands(match: { plainSimilarity: number }, threshold: number, geometry: GeometryResult | null): boolean {
  return match.plainSimilarity >= threshold || !(geometry && !geometry.confirmed && geometry.disjoint);
}

/** Another stored submission (the candidate) checked geometrically against this one; null when a file is gone. */
async function checkStoredPair(env: Env, row: SubmissionRow, other: SubmissionRow): Promise<GeometryResult | null> {
  const [mine, theirs] = await Promise.all([env.blobs.get(submissionKey(row.file)), env.blobs.get(submissionKey(other.file))]);
  return mine && theirs ? checkGeometry(env, theirs, mine, { submission: row.id, other: other.id }) : null;
}

/** The geometric check of a hash match the region hashes alone made (see hashMatchStands); null for a SPEC pHash match. */
const regionOnlyCheck = (env: Env, row: SubmissionRow, other: SubmissionRow | null, match: { plainSimilarity: number }, threshold: number) =>
  other && match.plainSimilarity < threshold ? checkStoredPair(env, row, other) : Promise.resolve(null);

/** What a hash match stores: how the hashes matched, and where, when the geometric check confirms it too. */
export const hashMatchFields = (match: { transform: string; similarity: number }, geometry: GeometryResult | null): MatchFields => ({
  match_transform: match.transform,
  match_similarity: match.similarity,
  ...(geometry?.confirmed ? matchRegionFields(geometry) : {}),
});

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
  const references = await referenceIndex(env);
  for (const id of new Set(ids)) {
    const row = await getSubmissionRow(env.db, id);
    if (!row) continue;
    const now = env.clock.now().toISOString();
    // A row awaiting new analysis matches nothing.
    const fp = row.analysis_status === 'done' && row.phash ? storedFingerprints(row.phash, row.fingerprints) : null;
    const evidence: NewEvidence[] = [];
    if (fp) {
      /** An internal match with another submission; `confidence` is the figure that decided it. */
      const internal = (other: SubmissionRow, plainSimilarity: number, how: MatchFields): NewEvidence => ({
        source: 'internal',
        kind: 'submission_match',
        group: 'internal',
        title: other.title,
        local_media_path: other.file,
        similarity: plainSimilarity,
        matched: true,
        ...how,
        confidence: how.match_similarity,
        matched_submission_id: other.id,
      });
      const query = new SlotQuery(fp, threshold);
      const candidates = async (probe: SlotProbe | null) =>
        (await submissionsFound(env.db, probe, id)).map((found) => ({ key: found.id, fingerprints: rowFingerprints(found) }));
      for (const match of query.matches(await candidates(query.matchProbe()))) {
        const other = await getSubmissionRow(env.db, match.key);
        const geometry = await regionOnlyCheck(env, row, other, match, threshold);
        if (other && hashMatchStands(match, threshold, geometry)) evidence.push(internal(other, match.plainSimilarity, hashMatchFields(match, geometry)));
      }
      // Near the threshold the pHash cannot tell; the geometric check of both images can.
      const from = threshold - NEAR_THRESHOLD;
      const nearest = query.near(await candidates(query.nearProbe(from)), from).sort((a, b) => b.plainSimilarity - a.plainSimilarity);
      for (const near of nearest.slice(0, NEAR_CHECKS)) {
        const other = await getSubmissionRow(env.db, near.key);
        const geometry = other && (await checkStoredPair(env, row, other));
        if (other && geometry?.confirmed) evidence.push(internal(other, near.plainSimilarity, geometricMatch(geometry)));
      }
      for (const match of references.index.query(fp, threshold)) {
        const entry = references.entries.get(match.key)!;
        if (entry.submission_id === id) continue;
        const other = await getSubmissionRow(env.db, entry.submission_id);
        const geometry = await regionOnlyCheck(env, row, other, match, threshold);
        if (!hashMatchStands(match, threshold, geometry)) continue;
        const confirmed = entry.state === WATCHLIST_CONFIRMED;
        evidence.push({
          source: 'watchlist',
          kind: confirmed ? 'watchlist_entry' : 'attention_candidate',
          group: confirmed ? 'watchlist' : 'attention',
          title: other?.title ?? entry.submission_id,
          local_media_path: other?.file ?? null,
          similarity: match.plainSimilarity,
          matched: true,
          ...hashMatchFields(match, geometry),
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
