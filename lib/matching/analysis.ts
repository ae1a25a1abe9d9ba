import { isStorageFull } from '../http/errors.js';
import { ImageRejected } from '../images/rejected.js';
import { RobustIndex, SlotQuery, pairMatcher, type Fingerprints, type PairMatch } from '../images/robust.js';
import { hasRights, readRightsMetadata, rightsMismatch, rightsText, type RightsMetadata } from '../images/rights-metadata.js';
import type { ConfirmedGeometry, GeometryResult } from '../images/geometry.js';
import { contentHash } from '../images/source.js';
import {
  geometricMatch,
  matchRegionFields,
  referenceEvidenceStatements,
  replaceRightsEvidence,
  rightsEvidenceChanges,
  rightsEvidenceStatement,
  type MatchFields,
  type NewEvidence,
  type RightsRow,
} from '../repo/evidence.js';
import { submissionKey, thumbnailKey } from '../blobs/keys.js';
import { rowsOf } from '../repo/columns.js';
import { fromJson } from '../repo/json.js';
import { listReferenceEntries, referenceEntriesStatement, type ReferenceEntryRow } from '../repo/knowledge.js';
import type { JobOutcome } from '../jobs/loops.js';
import { enqueueIndexJobStatement, enqueueJobStatement, type ClaimedJob } from '../repo/jobs.js';
import { backfillFingerprintSlots, fingerprintSlotsStatements, submissionsFound, type CandidateRow, type FingerprintRow } from '../repo/fingerprint-slots.js';
import {
  dropStalePairsStatement,
  internalEvidenceStatements,
  pairPartnersStatement,
  pairsOf,
  pairsOfStatement,
  partnersOf,
  writePairsStatements,
  type PairVerdict,
} from '../repo/pairs.js';
import { getSubmissionRow, saveAnalysisFailure, saveAnalysisStatement, type SubmissionRow } from '../repo/submissions.js';
import { recomputeRisk, recomputeRiskStatement, RIGHTS_KIND, RIGHTS_MISMATCH_KIND } from '../review/risk.js';
import { WATCHLIST_CONFIRMED } from '../vocabulary.js';
import { mapLimit } from '../threads/map-limit.js';
import type { Env, ImageSource, Settled, Statement } from '../ports.js';

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
 * Analyses one stored submission (its row as read): fingerprints, faces and thumbnail side by side
 * (each runs off the event loop: the luma reader's and the face model's worker threads, libvips'
 * thread pool). An image that cannot be decoded, or a file that is gone, marks it failed with the
 * reason, which is returned; any other error is thrown. `stored` is the row as the analysis left
 * it, or null when nothing was stored because a reload recorded other bytes meanwhile (their own
 * analysis is queued).
 */
export async function analyseSubmission(env: Env, row: SubmissionRow): Promise<{ stored: SubmissionRow | null; failure: string | null }> {
  const { id } = row;
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
    // The rights evidence as it stands is read in the analysis's batch: on D1, one round trip for both.
    const [analysis, rights] = await env.db.batch([saveAnalysisStatement(env.db, id, row.sha256, result, now()), rightsEvidenceStatement(env.db, id)]);
    const saved = rowsOf<SubmissionRow>(analysis)[0] ?? null;
    if (saved) {
      // Read from the submitted bytes: the derived copy that leaves the service has none of these fields.
      const found = rightsEvidence(await readRightsMetadata(bytes), row.submitter);
      const changes = rightsEvidenceChanges(env.db, id, rowsOf<RightsRow>(rights), found, now());
      if (changes.length) await env.db.batch(changes);
    }
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
 * operator's mark stays; new bytes with other fields replace it (rightsEvidenceChanges).
 */
function rightsEvidence(rights: RightsMetadata, submitter: string | null): NewEvidence | null {
  if (!hasRights(rights)) return null;
  return {
    source: 'file_metadata',
    kind: rightsMismatch(rights, submitter) ? RIGHTS_MISMATCH_KIND : RIGHTS_KIND,
    group: 'rights',
    title: '파일 권리 표기',
    text: rightsText(rights),
  };
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
  await replaceRightsEvidence(env.db, id, rightsEvidence(await readRightsMetadata(bytes), row.submitter), now);
  await recomputeRisk(env.db, id, now);
}

/**
 * Stores a submission's fingerprints in the similarity index (or takes it out when it has none),
 * judges its pairs with every submission the lookups find, then rebuilds its similarity evidence
 * and risk, and the evidence about it and the risk of every submission it matched before or
 * matches now (decision 0077). No lease: comparisons run side by side on every process and
 * isolate (decision 0033). Its slots are written before it looks, so of two comparisons running
 * at once the later lookup finds the earlier one's submission, and a pair judged by both gets the
 * same verdict; a verdict is stored only while both sides still have the bytes it was judged on.
 * `known` is its row as the caller just read or stored it (read here when not given). The
 * submission's enrichment is queued with the comparison's writes.
 */
export async function compareSubmission(env: Env, id: string, known?: SubmissionRow | null): Promise<void> {
  const row = known === undefined ? await getSubmissionRow(env.db, id) : known;
  const fp = row?.analysis_status === 'done' && row.phash ? storedFingerprints(row.phash, row.fingerprints) : null;
  // The slots and the reads that go with them are one batch: on D1, one round trip.
  const slots = fingerprintSlotsStatements(env.db, id, fp);
  const reads = [pairPartnersStatement(env.db, id), pairsOfStatement(env.db, id), referenceEntriesStatement(env.db)];
  const [partners, pairs, references] = (await env.db.batch([...slots, ...reads])).slice(slots.length);
  const judged = row && fp ? await judgePairs(env, row, fp, pairsOf(pairs)) : [];
  const own = row ? await similarityStatements(env, referenceIndex(rowsOf<ReferenceEntryRow>(references)), row) : [];
  const now = env.clock.now().toISOString();
  // Whose internal evidence the verdicts may change: those it matched before (pairs and evidence, for
  // any bytes) and those it matches now. A pair another comparison writes meanwhile comes with that
  // comparison's own rebuild of both sides.
  const touched = new Set([...partnersOf(id, partners), ...judged.filter((p) => p.matched).map((p) => (p.a === id ? p.b : p.a))]);
  const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
  // Every write of the comparison in one batch, one transaction (decision 0051): the verdicts, then
  // each touched submission's evidence about this one as their pair stands at commit, and its risk
  // from its evidence; last the enrichment's job, queued once the comparison commits (decision 0056).
  const written = await env.db.batch([
    dropStalePairsStatement(env.db, id, threshold),
    ...writePairsStatements(env.db, judged),
    ...own,
    ...[...touched].flatMap((other) => [...internalEvidenceStatements(env.db, other, now, id), recomputeRiskStatement(env.db, other, now)]),
    enqueueJobStatement(env.db, 'enrich', id, {}, now),
  ]);
  if (rowsOf(written[written.length - 1]).length > 0) await env.jobs.notify(1);
}

const rowFingerprints = (row: FingerprintRow) => storedFingerprints(row.phash, row.fingerprints);

/**
 * The `analyse` job queued by a reload: analysis (unless a previous run already stored it, before a
 * crash), comparison, then the submission's enrichment job. Running it twice stores the same thing.
 */
export async function runAnalyseJob(env: Env, job: ClaimedJob): Promise<JobOutcome> {
  if (!job.submission_id) return { status: 'failed', error: 'the job names no submission' };
  const id = job.submission_id;
  // As the claim read it, in its batch; read here for a job claimed otherwise.
  const row = job.submission !== undefined ? job.submission : await getSubmissionRow(env.db, id);
  if (!row) return { status: 'skipped' };
  const analysed = row.analysis_status === 'pending' ? await analyseSubmission(env, row) : { stored: row, failure: row.analysis_error };
  // The row is read once and passed along: as the analysis stored it, or again when a reload recorded other bytes meanwhile.
  const current = analysed.stored ?? (await getSubmissionRow(env.db, id));
  await compareSubmission(env, id, current);
  if (current?.analysis_status === 'failed') return { status: 'failed', error: analysed.failure ?? current.analysis_error ?? 'analysis failed' };
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

/**
 * How far below the threshold a plain pHash similarity still sends a pair to the geometric check.
 * Every such pair is checked, once: its verdict is kept (submission_pairs), and a submission's
 * refreshed partners read theirs instead of checking again.
 */
const NEAR_THRESHOLD = 0.1;

/**
 * The geometric check of a candidate (`query`) against a submission (`reference`); null when it
 * cannot run. A failure of the check itself (not of the images, which their fingerprints already
 * accepted) is logged with `context` and leaves the hash verdict.
 */
export async function checkGeometry(
  env: Env,
  query: ImageSource,
  reference: ImageSource,
  context: Record<string, unknown>,
  edit?: string,
): Promise<GeometryResult | null> {
  try {
    return await env.images.matchGeometry(query, reference, edit);
  } catch (error) {
    // A pair's file that cannot be read as it was analysed is the comparison's to handle, not a failed check.
    if (error instanceof FileChanged || error instanceof FileUnreadable) throw error;
    env.log.warn('geometric check failed', { ...context, error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

/**
 * Whether a hash match stands beside the geometric check of the same pair. The SPEC pHash decides
 * first: a match at its threshold always stands. One the region hashes alone made is refused when
 * the check finds the two images disjoint (both textured, nothing of one seen in the other): the
 * hashes then agreed on the layout, such as the black canvas two pale pictures turned by about the
 * same angle leave. Every such match is checked, once: its pair's verdict is kept (decision 0033),
 * and the images port keeps recent keypoints. Even when each refreshed partner checked its pairs
 * again, a batch of edits of one picture ingested faster than before the check (7.4 against 6.2
 * images/s, the ingest bench's variants corpus).
 */
export function hashMatchStands(match: { plainSimilarity: number }, threshold: number, geometry: GeometryResult | null): boolean {
  return match.plainSimilarity >= threshold || !(geometry && !geometry.confirmed && geometry.disjoint);
}

/** What a pair check reads of each side: the file, and the bytes (SHA-256) its fingerprints were computed from. */
interface PairSide {
  id: string;
  file: string;
  sha256: string | null;
}

type AnalysedSide = PairSide & { sha256: string };
const analysed = (side: PairSide): side is AnalysedSide => side.sha256 !== null;

/** A side's file is gone or no longer holds the bytes its pair was found for: the pair is left unjudged. */
class FileChanged extends Error {}
/** The storage failed to read a side's file (`cause`): the comparison fails with that error, and its job tries again. */
class FileUnreadable extends Error {}

/**
 * A side of a pair as an image source: the images port reads its file only when it has nothing
 * kept of those bytes; a file that no longer holds them throws FileChanged.
 */
function pairSource(env: Env, side: AnalysedSide): ImageSource {
  return {
    sha256: side.sha256,
    async bytes() {
      const bytes = await env.blobs.get(submissionKey(side.file)).catch((error: unknown) => {
        throw new FileUnreadable(`the file of ${side.id} could not be read`, { cause: error });
      });
      if (!bytes || contentHash(bytes) !== side.sha256) throw new FileChanged(`the file of ${side.id} no longer holds the bytes its pair was found for`);
      return bytes;
    },
  };
}

/** The side a pair's geometric check takes as its reference: the other is the query. */
type CheckedPair = { geometry: GeometryResult | null; reference: string };

/**
 * The geometric check of a pair, always in the same direction whichever side is being compared: the
 * side with the smaller SHA-256 is the query, so the same two pictures get the same check under
 * any names and in any order. `edits`, the edit named with x and with y as the query, tell the
 * check which edit the pixels may confirm without keypoints; without them keypoints decide. Null
 * when a side has not been analysed, or a file the check had to read is gone or no longer holds
 * the bytes the pair was found for (its reload will compare it again). The verdict is on the two
 * SHA-256s: the images port reads a file only when it keeps nothing made from those bytes (its grey
 * copy, its keypoints).
 */
async function checkPair(env: Env, x: PairSide, y: PairSide, edits?: [string, string]): Promise<CheckedPair | null> {
  if (!analysed(x) || !analysed(y)) return null;
  const xFirst = x.sha256 <= y.sha256;
  const [query, reference] = xFirst ? [x, y] : [y, x];
  const edit = edits?.[xFirst ? 0 : 1];
  try {
    const geometry = await checkGeometry(env, pairSource(env, query), pairSource(env, reference), { submission: reference.id, other: query.id }, edit);
    return { geometry, reference: reference.id };
  } catch (error) {
    if (error instanceof FileChanged) return null;
    throw error instanceof FileUnreadable ? error.cause : error;
  }
}

/** A confirmed check as `side`'s evidence reads it: its own image is the check's reference (B). */
function seenFrom(checked: CheckedPair | null, side: string): ConfirmedGeometry | null {
  const geometry = checked?.geometry;
  if (!checked || !geometry?.confirmed) return null;
  if (checked.reference === side) return geometry;
  return { ...geometry, regionA: geometry.regionB, regionB: geometry.regionA, coverageA: geometry.coverageB, coverageB: geometry.coverageA };
}

/**
 * The verdicts on the pairs of a submission with every analysed submission its lookups find (hash
 * candidates and the near-threshold band), judged anew unless a verdict for the same bytes of both
 * sides at this threshold is among those `kept` (read before the lookups: a pair judged meanwhile
 * is judged again, to the same verdict). Both ways of the hash match count (matchPair); a match the region
 * hashes alone made, and a pair in the near band, get the geometric check (checkPair).
 */
async function judgePairs(env: Env, row: SubmissionRow, fp: Fingerprints, kept: PairVerdict[]): Promise<PairVerdict[]> {
  if (!row.sha256) return [];
  const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
  const query = new SlotQuery(fp, threshold);
  const found = await submissionsFound(env.db, [query.matchProbe(), query.nearProbe(threshold - NEAR_THRESHOLD)], row.id);
  const judged = new Set(kept.filter((p) => p.threshold === threshold).map((p) => `${p.a}|${p.a_sha256}|${p.b}|${p.b_sha256}`));
  const mine: JudgedSide = { ...row, sha256: row.sha256, fingerprints: fp };
  const unjudged = found.filter((other): other is CandidateRow & { sha256: string } => {
    if (!other.sha256) return false;
    const [a, b] = row.id < other.id ? [row, other] : [other, row];
    return !judged.has(`${a.id}|${a.sha256}|${b.id}|${b.sha256}`);
  });
  const withMine = pairMatcher(fp, threshold);
  const verdicts = await mapLimit(unjudged, CHECKS_AT_ONCE, (other) =>
    judgePair(env, mine, { ...other, fingerprints: rowFingerprints(other) }, withMine, threshold),
  );
  return verdicts.filter((verdict): verdict is PairVerdict => verdict !== null);
}

/**
 * How many of a comparison's pairs are judged at once (decision 0053). A geometric check mostly
 * waits: on the images port's worker threads and libvips, or on another process computing a
 * picture's keypoints (its claim, decision 0047; consecutive comparisons check the same pictures).
 * One at a time, a process whose check waited on the other's claim left its core idle while its
 * next candidates had work; a few at once keep it busy, and a burst's hundred candidates still do
 * not hold their files and keypoints all at once. Each pair's verdict is its own, whatever the order.
 */
const CHECKS_AT_ONCE = 4;

interface JudgedSide extends PairSide {
  sha256: string;
  fingerprints: Fingerprints;
}

/**
 * One pair's verdict, the same whichever side is compared: null when the two are neither a hash
 * match nor in the near band, or when the check they need could not read the bytes they were found
 * for. A check that fails in itself leaves the hash verdict (checkGeometry). `withX` is matchPair
 * with x's fingerprints; the hash verdict is read with the side of the smaller id first.
 */
async function judgePair(env: Env, x: JudgedSide, y: JudgedSide, withX: (y: Fingerprints) => PairMatch, threshold: number): Promise<PairVerdict | null> {
  const [a, b] = x.id < y.id ? [x, y] : [y, x];
  const hashed = inOrder(withX(y.fingerprints), a === x);
  const near = !hashed.seen && hashed.plainSimilarity >= threshold - NEAR_THRESHOLD - 1e-9;
  if (!hashed.seen && !near) return null;
  const needsCheck = near || hashed.plainSimilarity < threshold;
  // A pair in the near band has no edit named: its pixels are asked whether it is the same picture
  // as it stands (a copy re-toned until its pHash moved, the band's most common pair; decision 0075).
  const edits: [string, string] = hashed.seen ? [hashed.seen[0].transform, hashed.seen[1].transform] : ['identity', 'identity'];
  const checked = needsCheck ? await checkPair(env, a, b, edits) : null;
  if (needsCheck && (!checked || (near && !checked.geometry))) return null;
  const pair = { a: a.id, b: b.id, a_sha256: a.sha256, b_sha256: b.sha256, threshold, similarity: hashed.plainSimilarity };
  const unmatched = { ...pair, matched: false, a_view: null, b_view: null };
  if (hashed.seen) {
    const [forA, forB] = hashed.seen;
    if (!hashMatchStands(forA, threshold, checked?.geometry ?? null)) return unmatched;
    return { ...pair, matched: true, a_view: hashMatchFields(forA, seenFrom(checked, a.id)), b_view: hashMatchFields(forB, seenFrom(checked, b.id)) };
  }
  const [forA, forB] = [seenFrom(checked, a.id), seenFrom(checked, b.id)];
  return forA && forB ? { ...pair, matched: true, a_view: geometricMatch(forA), b_view: geometricMatch(forB) } : unmatched;
}

/** A pair's hash verdict of (x, y) as that of (y, x) when `xFirst` is false: matchPair's two ways swap. */
function inOrder(match: PairMatch, xFirst: boolean): PairMatch {
  return xFirst || !match.seen ? match : { ...match, seen: [match.seen[1], match.seen[0]] };
}

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

/** Attention candidates and watchlist entries, indexed for one run. */
interface References {
  index: RobustIndex<string>;
  entries: Map<string, ReferenceEntry>;
}

/** Attention candidates and watchlist entries (never excluded ones), indexed for this run. */
function referenceIndex(rows: ReferenceEntryRow[]): References {
  const index = new RobustIndex<string>();
  const entries = new Map<string, ReferenceEntry>();
  for (const row of rows) {
    const entry = { id: row.id, submission_id: row.submission_id, state: row.state, fingerprints: storedFingerprints(row.phash, row.fingerprints) };
    entries.set(row.id, entry);
    index.add(row.id, entry.fingerprints);
  }
  return { index, entries };
}

/**
 * Recomputes the similarity evidence of the given submissions and their risk: the internal matches
 * from their pairs, the attention and watchlist matches against the entries as they stand.
 * Operator marks on evidence found again are kept. The decision is never touched.
 */
export async function refreshSimilarity(env: Env, ids: Iterable<string>): Promise<void> {
  const references = referenceIndex(await listReferenceEntries(env.db));
  for (const id of new Set(ids)) {
    const row = await getSubmissionRow(env.db, id);
    if (row) await env.db.batch(await similarityStatements(env, references, row));
  }
}

/**
 * The statements that make one submission's similarity evidence and risk what its row, as it
 * stands, and its pairs give. In one batch, the internal matches read the pairs as they stand when
 * it commits, and the risk reads the evidence it leaves.
 */
async function similarityStatements(env: Env, references: References, row: SubmissionRow): Promise<Statement[]> {
  const { id } = row;
  const threshold = env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD;
  const now = env.clock.now().toISOString();
  // A row awaiting new analysis matches nothing.
  const fp = row.analysis_status === 'done' && row.phash ? storedFingerprints(row.phash, row.fingerprints) : null;
  const evidence: NewEvidence[] = [];
  for (const match of fp ? references.index.query(fp, threshold) : []) {
    const entry = references.entries.get(match.key)!;
    if (entry.submission_id === id) continue;
    const other = await getSubmissionRow(env.db, entry.submission_id);
    const geometry = other && match.plainSimilarity < threshold ? await checkPair(env, row, other) : null;
    if (!hashMatchStands(match, threshold, geometry?.geometry ?? null)) continue;
    const confirmed = entry.state === WATCHLIST_CONFIRMED;
    evidence.push({
      source: 'watchlist',
      kind: confirmed ? 'watchlist_entry' : 'attention_candidate',
      group: confirmed ? 'watchlist' : 'attention',
      title: other?.title ?? entry.submission_id,
      local_media_path: other?.file ?? null,
      similarity: match.plainSimilarity,
      matched: true,
      ...hashMatchFields(match, seenFrom(geometry, id)),
      confidence: match.similarity,
      matched_submission_id: entry.submission_id,
      knowledge_entry_id: entry.id,
    });
  }
  return [
    ...internalEvidenceStatements(env.db, id, now),
    ...(await referenceEvidenceStatements(env.db, id, evidence, now)),
    recomputeRiskStatement(env.db, id, now),
  ];
}
