import type { z } from 'zod';
import type { ManualSearchRecord } from '../api/records.js';
import { ServiceError, conflict, invalid, notFound } from '../http/errors.js';
import type { ProviderResult } from '../providers/call.js';
import { createProviderClients, type ProviderClients } from '../providers/clients.js';
import { auditStatement } from '../repo/audit.js';
import { addEvidence, type Evidence, type NewEvidence } from '../repo/evidence.js';
import { getSubmissionRow } from '../repo/submissions.js';
import { recomputeRisk } from '../review/risk.js';
import { storedFingerprints } from '../matching/analysis.js';
import { captureMatchedPages } from './capture.js';
import { gatedCall } from '../providers/gate.js';
import { referenceOf, verifyImage, type Reference } from './verify.js';
import { verdictFields } from '../matching/verdict.js';
import { submissionKey } from '../blobs/keys.js';
import type { Env } from '../ports.js';

/**
 * `POST /api/search/manual`: an operator's text query to a search provider. Only the text leaves;
 * with a submission, the results become its evidence and their images are verified like any other.
 */
export type ManualProvider = 'regional' | 'global_search';
type ManualSearch = z.infer<typeof ManualSearchRecord>;
type ManualType = ManualSearch['type'];
type ManualResult = ManualSearch['results'][number];

export async function manualSearch(env: Env, request: { provider: ManualProvider; query: string; type: ManualType; submission_id?: string }) {
  const { provider, query, type } = request;
  if (provider === 'global_search' && type === 'blog') throw invalid('global_search has no blog search; use image or web');
  const submission = request.submission_id ? await getSubmissionRow(env.db, request.submission_id) : null;
  if (request.submission_id && !submission) throw notFound(`unknown submission: ${request.submission_id}`);
  const clients = createProviderClients(env.config, env.egress);
  const answer = await gatedCall(env, provider, () => search(clients, provider, type, query));
  const now = () => env.clock.now().toISOString();
  await auditStatement(
    env.db,
    {
      action: 'search.manual',
      target_type: 'provider',
      target_id: provider,
      details: { type, query, submission_id: submission?.id ?? null, ok: answer.ok, results: answer.ok ? answer.items.length : 0 },
    },
    now(),
    env.actor,
  ).run();
  if (!answer.ok) {
    const code = 'refused' in answer ? answer.refused : 'provider_error';
    throw new ServiceError(code, answer.error.message);
  }
  let evidence: Evidence[] = [];
  if (submission?.phash) {
    const { file, phash, fingerprints } = submission;
    // Read once, and only when a result has an image to verify.
    let reference: Reference | null = null;
    const readReference = async (): Promise<Reference> => {
      const image = await env.blobs.get(submissionKey(file));
      if (!image) throw conflict(`the submitted file ${file} is gone: the results cannot be verified against it`);
      return referenceOf(storedFingerprints(phash, fingerprints), image);
    };
    const items: NewEvidence[] = [];
    let budget = env.config.SVC_SEARCH_RESULT_COMPARE_LIMIT;
    for (const r of answer.items) {
      const v = r.image_url && budget-- > 0 ? await verifyImage(env, submission.id, (reference ??= await readReference()), r.image_url) : null;
      items.push({
        source: provider,
        kind: `manual_${type}_result`,
        title: r.title,
        url: r.url,
        image_url: r.image_url ?? r.thumbnail_url,
        query,
        ...verdictFields(v),
      });
    }
    // A verified match found by hand is kept like one found by enrichment: its page is captured.
    const captured = await captureMatchedPages(env, await addEvidence(env.db, submission.id, items, now()));
    evidence = captured.evidence;
    const { failures } = captured;
    if (failures.length > 0) evidence.push(...(await addEvidence(env.db, submission.id, failures, now())));
    await recomputeRisk(env.db, submission.id, now());
  }
  return { provider, query, type, results: answer.items, evidence };
}

/** One search, its items in the manual-search shape; a failure passes through as it is. */
async function search(clients: ProviderClients, provider: ManualProvider, type: ManualType, query: string): Promise<ProviderResult<{ items: ManualResult[] }>> {
  if (provider === 'regional' && type === 'image') {
    const r = await clients.regional.searchImages(query);
    return r.ok ? { ok: true, items: r.items.map((i) => ({ title: i.title, url: i.imageUrl, image_url: i.imageUrl, thumbnail_url: i.thumbnailUrl })) } : r;
  }
  if (provider === 'regional') {
    const r = type === 'blog' ? await clients.regional.searchBlogs(query) : await clients.regional.searchWebDocuments(query);
    return r.ok ? { ok: true, items: r.items.map((i) => ({ title: i.title, url: i.pageUrl, image_url: null, thumbnail_url: null })) } : r;
  }
  const r = type === 'image' ? await clients.globalSearch.searchImages(query) : await clients.globalSearch.searchWeb(query);
  return r.ok ? { ok: true, items: r.items.map((i) => ({ title: i.title, url: i.pageUrl, image_url: i.imageUrl, thumbnail_url: i.thumbnailUrl })) } : r;
}
