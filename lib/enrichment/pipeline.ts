import { readSubmissionImage, storedFingerprints } from '../matching/analysis.js';
import type { Fingerprints } from '../images/robust.js';
import type { ProviderId } from '../providers/catalog.js';
import type { ProviderResult } from '../providers/call.js';
import { createProviderClients, type ProviderClients } from '../providers/clients.js';
import { approveForVision, type ApprovedImage } from '../providers/derived-image.js';
import type { WebDetection } from '../providers/global-vision.js';
import { addEvidence, listEvidence, startEnrichment, type Evidence, type NewEvidence } from '../repo/evidence.js';
import { fromJson } from '../repo/json.js';
import { enrichmentStatusStatement, saveDerivedPath, setEnrichmentStatus, type EnrichmentStatus, type SubmissionRow } from '../repo/submissions.js';
import { recomputeRisk } from '../review/risk.js';
import { isStorageFull } from '../http/errors.js';
import { serialized } from '../db/serial.js';
import { captureMatchedPages } from './capture.js';
import { gatedCall, providerBlock } from '../providers/gate.js';
import { deriveQueryCandidates, helperSearchQueries, imageSearchQueries, type QueryCandidate } from './queries.js';
import { summariseEvidence } from './summary.js';
import { pageImageCandidates, referenceOf, verifyImage, type Reference } from './verify.js';
import { verdictFields, type Verification } from '../matching/verdict.js';
import { derivedKey } from '../blobs/keys.js';
import type { Env } from '../ports.js';

/**
 * The enrichment flow of SPEC.md section 1 for one submission:
 * 1. the derived image goes to web detection; its matches, pages, entities and labels become evidence;
 * 2. text queries are derived from that evidence;
 * 3. they run against the regional and the global custom image search (text only);
 * 4. result images (or a result page's images) are downloaded and verified by fingerprint;
 * 5. with no direct match, the blog and custom web searches run as helpers, then web documents;
 * then the language model summarises the stored evidence. Every provider failure becomes a failure
 * evidence record and the flow goes on.
 */
export interface EnrichOptions {
  /** Also send each detected face crop, as its own derived image, to web detection. */
  faceCrop: boolean;
}

export interface EnrichResult {
  status: EnrichmentStatus;
  added: Evidence[];
}

/** Runs the flow; two runs for one submission never overlap (the second waits for the first). */
export async function enrichSubmission(env: Env, submissionId: string, options: EnrichOptions): Promise<EnrichResult> {
  return serialized(`enrich|${submissionId}`, () => runFlow(env, submissionId, options));
}

type Failure = { code: string; message: string };

/** Identity of an evidence item, so a rerun does not store what is already there. */
const evidenceKey = (e: {
  source: string;
  kind: string;
  group: string;
  url?: string | null;
  image_url?: string | null;
  query?: string | null;
  title?: string | null;
  text?: string | null;
  face_crop?: boolean;
  error?: Failure | null;
}) =>
  JSON.stringify([
    e.source,
    e.kind,
    e.group,
    e.url ?? null,
    e.image_url ?? null,
    e.query ?? null,
    e.title ?? null,
    e.text ?? null,
    Boolean(e.face_crop),
    e.error?.code ?? null,
    e.error?.message ?? null,
  ]);

class Run {
  readonly added: Evidence[] = [];
  private readonly known: Set<string>;
  private readonly noted = new Set<string>();
  /** A web candidate verified as the same image in this run. */
  directMatch = false;
  /** Provider requests that went out. */
  calls = 0;
  private reference: Promise<Reference> | null = null;
  readonly clients: ProviderClients;

  constructor(
    readonly env: Env,
    readonly submission: SubmissionRow,
    private readonly existing: Evidence[],
    private readonly fingerprints: Fingerprints,
  ) {
    this.known = new Set(existing.map(evidenceKey));
    this.clients = createProviderClients(env.config, env.egress);
  }

  /**
   * Whether the evidence stored as the run started, or added by it, holds anything for the language
   * model to summarise (not only failures and supporting items). Read from what the run holds, not
   * asked of the database: a submission with nothing found asks nothing more (decision 0054).
   */
  hasFindings(): boolean {
    return [...this.existing, ...this.added].some((e) => e.group !== 'failures' && !e.supporting);
  }

  /**
   * The submission's fingerprints and submitted image, what candidates are verified against. The
   * file is read once, when something first needs its bytes (web detection's derived copy, a face
   * crop, a candidate to verify): an enrichment with none of these reads nothing (decision 0054).
   * A file that is gone fails the enrichment at that point ("the submitted file ... is gone").
   */
  submitted(): Promise<Reference> {
    this.reference ??= readSubmissionImage(this.env, this.submission.file).then((image) => referenceOf(this.fingerprints, image));
    return this.reference;
  }

  async add(items: NewEvidence[]): Promise<void> {
    const fresh = items.filter((e) => {
      const k = evidenceKey(e);
      if (this.known.has(k)) return false;
      this.known.add(k);
      return true;
    });
    if (fresh.length === 0) return;
    const stored = await addEvidence(this.env.db, this.submission.id, fresh, this.env.clock.now().toISOString());
    const { evidence, failures } = await captureMatchedPages(this.env, stored);
    this.added.push(...evidence);
    await this.add(failures);
  }

  /** One gated provider call; a refusal or failure is stored as failure evidence and gives null. */
  async call<T extends object>(provider: ProviderId, what: string, query: string | null, send: () => Promise<ProviderResult<T>>): Promise<T | null> {
    const result = await gatedCall(this.env, provider, send);
    if (result.ok) {
      this.calls++;
      return result;
    }
    const refused = 'refused' in result;
    if (!refused) this.calls++;
    // A refusal says the same thing for every query: record it once per run.
    if (refused && this.noted.has(`${provider}|${result.refused}`)) return null;
    if (refused) this.noted.add(`${provider}|${result.refused}`);
    await this.add([
      {
        source: provider,
        kind: refused ? result.refused : `${what}_failed`,
        group: 'failures',
        title: refused ? result.error.message : `${what} failed`,
        query: refused ? null : query,
        error: result.error,
      },
    ]);
    return null;
  }

  /** Verifies candidate images (at most the compare limit) and returns the verdicts. */
  async verify(urls: string[]): Promise<Verification[]> {
    const limit = this.env.config.SVC_SEARCH_RESULT_COMPARE_LIMIT;
    const unique = [...new Set(urls.filter((u) => /^https?:\/\//i.test(u)))].slice(0, limit);
    if (unique.length === 0) return [];
    const reference = await this.submitted();
    const verdicts = [];
    for (const url of unique) {
      const v = await verifyImage(this.env, this.submission.id, reference, url);
      if (v.matched) this.directMatch = true;
      verdicts.push(v);
    }
    return verdicts;
  }
}

async function runFlow(env: Env, submissionId: string, options: EnrichOptions): Promise<EnrichResult> {
  // Marked running (when analysed) and read with its evidence in one round trip.
  const { row: submission, evidence } = await startEnrichment(env.db, submissionId, env.clock.now().toISOString());
  if (!submission) return { status: 'failed', added: [] };
  if (submission.analysis_status !== 'done' || !submission.phash) {
    await setEnrichmentStatus(env.db, submissionId, 'skipped', env.clock.now().toISOString());
    return { status: 'skipped', added: [] };
  }
  const run = new Run(env, submission, evidence, storedFingerprints(submission.phash, submission.fingerprints));
  let status: EnrichmentStatus;
  try {
    const detection = await detectWeb(
      run,
      async () => {
        const approved = await approveForVision(env.images, (await run.submitted()).image);
        await keepDerivedCopy(env, submissionId, approved);
        return approved;
      },
      false,
    );
    const faceDetections = options.faceCrop ? await faceCropDetections(run) : [];
    const candidates = detection ? deriveQueryCandidates(detection, faceDetections) : deriveQueryCandidates(emptyDetection(), faceDetections);
    await imageSearches(run, candidates);
    if (!run.directMatch) await helperSearches(run, candidates);
    await summarise(run);
    status = run.calls > 0 ? 'done' : 'skipped';
  } catch (error) {
    // A full disk stops the run without a verdict: the job waits and runs it again, and what this
    // run stored is not stored twice (evidenceKey).
    if (isStorageFull(error)) throw error;
    env.log.error('enrichment failed', { submission: submissionId, error: error instanceof Error ? error.message : String(error) });
    await run.add([
      {
        source: 'global_vision',
        kind: 'enrichment_failed',
        group: 'failures',
        title: 'enrichment stopped',
        error: { code: 'internal', message: error instanceof Error ? error.message : String(error) },
      },
    ]);
    status = 'failed';
  }
  const now = env.clock.now().toISOString();
  await recomputeRisk(env.db, submissionId, now, [enrichmentStatusStatement(env.db, submissionId, status, now)]);
  return { status, added: run.added };
}

/** The metadata-free copy that goes to web detection is kept as the record of what left the service. */
async function keepDerivedCopy(env: Env, submissionId: string, image: ApprovedImage): Promise<void> {
  const derivedPath = derivedKey(submissionId, image.format);
  await env.blobs.put(derivedPath, image.bytes);
  await saveDerivedPath(env.db, submissionId, derivedPath, env.clock.now().toISOString());
}

function emptyDetection(): WebDetection {
  return { webEntities: [], fullMatchingImages: [], partialMatchingImages: [], pagesWithMatchingImages: [], visuallySimilarImages: [], bestGuessLabels: [] };
}

/**
 * Step 1: web detection of a derived image; its findings become evidence, its image matches are
 * verified. The image is derived (decoded, stripped, encoded again, and kept as the record of what
 * left) only when web detection is on and configured: otherwise nothing leaves, the refusal is
 * recorded as for any call, and a team working without the provider keeps no copy per submission.
 */
async function detectWeb(run: Run, derive: () => Promise<ApprovedImage>, faceCrop: boolean): Promise<WebDetection | null> {
  const { clients } = run;
  const image = (await providerBlock(run.env, 'global_vision')) ? null : await derive();
  // Switched on between the two looks: derived as the call goes out.
  const answer = await run.call('global_vision', faceCrop ? 'face_crop_web_detection' : 'web_detection', null, async () =>
    clients.globalVision.detectWeb(image ?? (await derive())),
  );
  if (!answer) return null;
  const { detection, pagesByImage } = answer;
  const items: NewEvidence[] = [];
  const base = { source: 'global_vision' as const, face_crop: faceCrop };
  if (!faceCrop) {
    const matches: { url: string; score: number | null; kind: string; page?: WebDetection['pagesWithMatchingImages'][number] }[] = [
      ...detection.fullMatchingImages.map((i) => ({ ...i, kind: 'full_matching_image' })),
      ...detection.partialMatchingImages.map((i) => ({ ...i, kind: 'partial_matching_image' })),
      ...detection.pagesWithMatchingImages.flatMap((p) => p.fullMatchingImages.map((i) => ({ ...i, kind: 'full_matching_image', page: p }))),
    ];
    const verdicts = await run.verify(matches.map((m) => m.url));
    for (const v of verdicts) {
      const m = matches.find((x) => x.url === v.imageUrl)!;
      // A verified copy keeps the pages naming it (decision 0029); the first is its own page when it was listed on its own.
      const named = v.matched ? pagesByImage.get(v.imageUrl) : undefined;
      items.push({
        ...base,
        kind: m.kind,
        title: m.page?.pageTitle ?? named?.pages[0]?.title ?? null,
        url: m.page?.url ?? named?.pages[0]?.url ?? null,
        image_url: v.imageUrl,
        ...verdictFields(v),
        confidence: m.score,
        pages: named?.pages,
        page_count: named?.named,
      });
    }
  }
  for (const p of detection.pagesWithMatchingImages)
    items.push({ ...base, kind: 'page_with_matching_image', group: 'web_related', title: p.pageTitle || null, url: p.url, confidence: p.score });
  for (const e of detection.webEntities)
    if (e.description) items.push({ ...base, kind: 'web_entity', group: 'web_related', title: e.description, confidence: e.score });
  for (const l of detection.bestGuessLabels) if (l.label) items.push({ ...base, kind: 'best_guess_label', group: 'web_related', title: l.label });
  for (const i of detection.visuallySimilarImages.slice(0, 5))
    items.push({ ...base, kind: 'visually_similar_image', group: 'web_related', image_url: i.url, confidence: i.score });
  await run.add(items);
  return detection;
}

// A crop search costs one vision call (and quota) per face: a group photograph's faces are searched
// largest first, as many as this. Faces under 32 px give the vision service too little to match.
const FACE_CROP_LIMIT = 10;
const FACE_CROP_MIN_WIDTH = 32;

/** The faces a face-crop search sends: the largest FACE_CROP_LIMIT of FACE_CROP_MIN_WIDTH or wider. */
export function faceCropChoice<T extends { box: { width: number; height: number } }>(faces: T[]): T[] {
  return faces
    .filter((face) => face.box.width >= FACE_CROP_MIN_WIDTH)
    .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)
    .slice(0, FACE_CROP_LIMIT);
}

/** Each de-duplicated face crop as its own derived image; its evidence is marked and never scored. */
async function faceCropDetections(run: Run): Promise<WebDetection[]> {
  const faces = faceCropChoice(fromJson<{ box: { x: number; y: number; width: number; height: number }; score: number }[]>(run.submission.faces, []));
  if (faces.length === 0) return [];
  const detections: WebDetection[] = [];
  for (const crop of await run.env.images.cropFaces((await run.submitted()).image, faces)) {
    if (!crop.ok) {
      await run.add([
        {
          source: 'global_vision',
          kind: 'face_crop_failed',
          group: 'failures',
          face_crop: true,
          title: 'face crop failed',
          error: { code: 'crop_failed', message: crop.error },
        },
      ]);
      continue;
    }
    const detection = await detectWeb(run, () => approveForVision(run.env.images, crop.bytes), true);
    if (detection) detections.push(detection);
  }
  return detections;
}

/** Step 3 and 4: regional and custom image search with the derived queries; results verified. */
async function imageSearches(run: Run, candidates: QueryCandidate[]): Promise<void> {
  const { config } = run.env;
  const { clients } = run;
  for (const query of imageSearchQueries(candidates, config.SVC_AUTO_REGIONAL_QUERY_LIMIT)) {
    for (let page = 0; page < config.REGIONAL_SEARCH_PAGES; page++) {
      const answer = await run.call('regional', 'image_search', query, () => clients.regional.searchImages(query, page));
      if (!answer) break;
      const { items } = answer;
      const verdicts = await run.verify(items.flatMap((i) => (i.imageUrl ? [i.imageUrl] : [])));
      await run.add(
        items.map((i) => {
          const v = verdicts.find((x) => x.imageUrl === i.imageUrl);
          return {
            source: 'regional',
            kind: 'image_result',
            title: i.title,
            url: i.imageUrl,
            image_url: i.imageUrl ?? i.thumbnailUrl,
            query,
            ...verdictFields(v),
          } satisfies NewEvidence;
        }),
      );
      if (items.length < config.REGIONAL_SEARCH_DISPLAY) break;
    }
  }
  for (const query of imageSearchQueries(candidates, config.SVC_AUTO_GLOBAL_CUSTOM_QUERY_LIMIT)) {
    for (let page = 0; page < config.GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES; page++) {
      const answer = await run.call('global_search', 'image_search', query, () => clients.globalSearch.searchImages(query, page));
      if (!answer) break;
      await searchResults(run, 'global_search', 'image_result', query, answer.items);
      if (answer.items.length < config.GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS) break;
    }
  }
}

interface SearchItem {
  title: string;
  pageUrl: string | null;
  imageUrl: string | null;
  thumbnailUrl: string | null;
  snippet?: string;
  pageImageUrls?: string[];
}

/**
 * Results of one search: an item's own image is verified; an item without one has its page's
 * images (og:image, twitter:image, img) verified instead. One evidence item per result.
 */
async function searchResults(run: Run, source: 'regional' | 'global_search', kind: string, query: string, items: SearchItem[]): Promise<void> {
  let budget = run.env.config.SVC_SEARCH_RESULT_COMPARE_LIMIT;
  const evidence: NewEvidence[] = [];
  for (const item of items) {
    let candidates = item.imageUrl ? [item.imageUrl] : (item.pageImageUrls ?? []);
    let pageError: Failure | null = null;
    if (candidates.length === 0 && item.pageUrl && budget > 0) {
      const page = await pageImageCandidates(run.env, item.pageUrl);
      candidates = page.urls;
      pageError = page.error;
    }
    candidates = candidates.slice(0, Math.max(0, Math.min(budget, run.env.config.SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT)));
    const verdicts = candidates.length ? await run.verify(candidates) : [];
    budget -= verdicts.length;
    const best =
      verdicts.find((v) => v.matched) ??
      verdicts.filter((v) => v.similarity !== null).sort((a, b) => (b.similarity ?? 0) - (a.similarity ?? 0))[0] ??
      verdicts[0];
    evidence.push({
      source,
      kind,
      title: item.title,
      text: item.snippet || null,
      url: item.pageUrl,
      image_url: best?.imageUrl ?? item.imageUrl ?? item.thumbnailUrl,
      query,
      ...verdictFields(best),
      error: best?.error ?? pageError,
    });
  }
  await run.add(evidence);
}

/** Step 5: helpers when no direct match was found: blog and custom web search, then web documents. */
async function helperSearches(run: Run, candidates: QueryCandidate[]): Promise<void> {
  const { config } = run.env;
  const { clients } = run;
  const toItems = (docs: { title: string; pageUrl: string | null; description: string }[]): SearchItem[] =>
    docs.map((d) => ({ title: d.title, pageUrl: d.pageUrl, imageUrl: null, thumbnailUrl: null, snippet: d.description }));
  for (const query of helperSearchQueries(candidates, config.SVC_AUTO_REGIONAL_BLOG_QUERY_LIMIT)) {
    for (let page = 0; page < config.REGIONAL_BLOG_SEARCH_PAGES; page++) {
      const answer = await run.call('regional', 'blog_search', query, () => clients.regional.searchBlogs(query, page));
      if (!answer) break;
      await searchResults(run, 'regional', 'blog_result', query, toItems(answer.items));
    }
  }
  for (const query of helperSearchQueries(candidates, config.SVC_AUTO_GLOBAL_CUSTOM_QUERY_LIMIT)) {
    for (let page = 0; page < config.GLOBAL_CUSTOM_SEARCH_WEB_PAGES; page++) {
      const answer = await run.call('global_search', 'web_search', query, () => clients.globalSearch.searchWeb(query, page));
      if (!answer) break;
      await searchResults(run, 'global_search', 'web_result', query, answer.items);
    }
  }
  if (run.directMatch) return;
  for (const query of helperSearchQueries(candidates, config.SVC_AUTO_REGIONAL_WEB_QUERY_LIMIT)) {
    for (let page = 0; page < config.REGIONAL_WEB_SEARCH_PAGES; page++) {
      const answer = await run.call('regional', 'web_document_search', query, () => clients.regional.searchWebDocuments(query, page));
      if (!answer) break;
      await searchResults(run, 'regional', 'web_document_result', query, toItems(answer.items));
    }
  }
}

/** The language model's summary of stored evidence, as supporting evidence citing its sources. */
async function summarise(run: Run): Promise<void> {
  if (!run.hasFindings()) return;
  const evidence = await listEvidence(run.env.db, run.submission.id);
  const { clients } = run;
  const summary = await run.call('local_llm', 'summary', null, () => summariseEvidence(evidence, (prompt) => clients.localLlm.generate(prompt)));
  if (summary) {
    await run.add([
      {
        source: 'local_llm',
        kind: 'summary',
        group: 'supporting',
        supporting: true,
        title: '근거 요약',
        text: summary.text,
        source_evidence_ids: summary.sourceEvidenceIds,
        source_urls: summary.sourceUrls,
      },
    ]);
  }
}

/** The `enrich` job queued by a reload: the flow without face crops (those are a re-analysis option). */
export async function runEnrichJob(env: Env, job: { submission_id: string | null }) {
  if (!job.submission_id) return { status: 'failed' as const, error: 'the job names no submission' };
  const result = await enrichSubmission(env, job.submission_id, { faceCrop: false });
  if (result.status === 'failed') return { status: 'failed' as const, error: 'enrichment stopped; see the failure evidence' };
  return { status: result.status === 'skipped' ? ('skipped' as const) : ('done' as const) };
}
