import { createHash } from 'node:crypto';
import { capturedPageKey } from '../blobs/keys.js';
import { readMediaBytes } from '../http/media.js';
import { downloadSettings, fetchSafely } from '../net/download.js';
import { conflict, isStorageFull, notFound } from '../http/errors.js';
import { auditStatement } from '../repo/audit.js';
import { addPageCapture, toPageCapture, type PageCapture, type PageCaptureRow } from '../repo/captures.js';
import { getEvidence, getEvidenceByIds, insertEvidenceStatement, type Evidence, type NewEvidence } from '../repo/evidence.js';
import { linkPagesStatements, setPageErrorStatement } from '../repo/evidence-pages.js';
import { newId } from '../repo/json.js';
import type { Env } from '../ports.js';

/**
 * Page capture: what a web page was when the service saw it. The page is fetched under the same
 * rules as every download (address checks on every hop, byte cap, overall timeout), its bytes are
 * kept as fetched under data/evidence/<submission>/pages/, and the record says where the fetch
 * ended, what the server answered and the SHA-256 of the stored bytes. The bytes are never served
 * as a page (see functions/evidence-capture.ts).
 */

const WEB_SOURCES = new Set(['regional', 'global_vision', 'global_search']);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The page address of a web evidence item, or null: failures, summaries and local evidence have
 * none, and an image result whose only address is the image itself has no page to keep.
 */
export function capturablePage(e: Evidence): string | null {
  if (!WEB_SOURCES.has(e.source) || e.group === 'failures' || e.supporting || !e.url) return null;
  if (!/^https?:\/\//i.test(e.url) || e.url === e.image_url) return null;
  return e.url;
}

export type CaptureOutcome = { ok: true; capture: PageCaptureRow } | { ok: false; failure: NewEvidence };

/**
 * Fetches and keeps a page of one web evidence item (its own page, or one linked to it); a failure
 * comes back as failure evidence.
 */
export async function capturePage(env: Env, evidence: Evidence, pageUrl = capturablePage(evidence)): Promise<CaptureOutcome> {
  const failed = (error: { code: string; message: string }): CaptureOutcome => ({
    ok: false,
    failure: {
      source: evidence.source,
      kind: 'page_capture_failed',
      group: 'failures',
      title: 'page capture failed',
      url: pageUrl ?? evidence.url,
      face_crop: evidence.face_crop,
      source_evidence_ids: [evidence.id],
      error,
    },
  });
  if (!pageUrl) return failed({ code: 'no_page', message: 'this evidence has no web page address' });
  const fetchedAt = env.clock.now().toISOString();
  const fetched = await fetchSafely(pageUrl, downloadSettings(env.config, env.egress), 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1');
  if (!fetched.ok) return failed(fetched.error);
  // Whatever breaks while keeping it is this capture's failure, not the run's; but a full disk is
  // thrown, so that the request answers 507 and the job waits and runs again (lib/jobs/loops.ts).
  try {
    const hash = sha256(fetched.body);
    const mediaType = (fetched.contentType ?? '').split(';')[0].trim().toLowerCase();
    const mediaPath = capturedPageKey(evidence.submission_id, `${hash.slice(0, 24)}.${HTML_TYPES.has(mediaType) ? 'html' : 'bin'}`);
    await env.blobs.put(mediaPath, fetched.body);
    const imageBytes = evidence.local_media_url?.startsWith('/media/evidence/')
      ? await readMediaBytes(env.blobs, evidence.local_media_url.slice('/media/'.length))
      : null;
    const header = (name: string) => {
      const value = fetched.headers[name];
      return typeof value === 'string' ? value : null;
    };
    const capture = await addPageCapture(env.db, {
      evidence_id: evidence.id,
      submission_id: evidence.submission_id,
      page_url: pageUrl,
      final_url: fetched.url,
      http_status: fetched.status,
      content_type: fetched.contentType,
      date_header: header('date'),
      last_modified: header('last-modified'),
      bytes: fetched.body.length,
      sha256: hash,
      media_path: mediaPath,
      image_sha256: imageBytes ? sha256(imageBytes) : null,
      fetched_at: fetchedAt,
    });
    return { ok: true, capture };
  } catch (error) {
    if (isStorageFull(error)) throw error;
    return failed({ code: 'storage_failed', message: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * The enrichment's step after storing evidence: every page of every verified web match is captured
 * (decision 0029). A match whose provider named no pages has its own page as its one page. A page
 * that fails keeps its error on its link; the match's own page also comes back as failure evidence
 * for the run to store (decision 0017); the run goes on. The evidence comes back as it then stands,
 * its pages with their captures.
 */
export async function captureMatchedPages(env: Env, stored: Evidence[]): Promise<{ evidence: Evidence[]; failures: NewEvidence[] }> {
  const failures: NewEvidence[] = [];
  if (!stored.some((e) => e.group === 'web_match')) return { evidence: stored, failures };
  for (const e of stored) {
    if (e.group !== 'web_match') continue;
    const own = capturablePage(e);
    if (own && !e.pages.some((p) => p.url === own)) await env.db.batch(linkPagesStatements(env.db, e.submission_id, e.id, [{ url: own, title: e.title }]));
    for (const pageUrl of new Set([...(own ? [own] : []), ...e.pages.map((p) => p.url)])) {
      const outcome = await capturePage(env, e, pageUrl);
      await setPageErrorStatement(env.db, e.id, pageUrl, outcome.ok ? null : (outcome.failure.error ?? null)).run();
      if (!outcome.ok && pageUrl === own) failures.push(outcome.failure);
    }
  }
  const ids = stored.map((e) => e.id);
  return { evidence: await getEvidenceByIds(env.db, ids), failures };
}

/**
 * An operator's capture of any web evidence's page (POST /api/evidence/{id}/capture). A failure is
 * stored as failure evidence, like in enrichment; either way the request is audited.
 */
export async function captureEvidencePage(env: Env, evidenceId: string): Promise<{ capture: PageCapture | null; evidence_added: Evidence[] }> {
  const evidence = await getEvidence(env.db, evidenceId);
  if (!evidence) throw notFound(`unknown evidence: ${evidenceId}`);
  const pageUrl = capturablePage(evidence);
  if (!pageUrl) throw conflict('this evidence has no web page to capture');
  const outcome = await capturePage(env, evidence, pageUrl);
  const now = env.clock.now().toISOString();
  const failureId = newId('ev');
  const details = outcome.ok
    ? { submission_id: evidence.submission_id, capture_id: outcome.capture.id, final_url: outcome.capture.final_url, sha256: outcome.capture.sha256 }
    : { submission_id: evidence.submission_id, failure_evidence_id: failureId, error: outcome.failure.error?.code ?? null };
  await env.db.batch([
    ...(outcome.ok ? [] : [insertEvidenceStatement(env.db, evidence.submission_id, outcome.failure, now, failureId)]),
    // When the page is linked to its match, its link says how this capture went.
    setPageErrorStatement(env.db, evidence.id, pageUrl, outcome.ok ? null : (outcome.failure.error ?? null)),
    auditStatement(env.db, { action: 'evidence.capture', target_type: 'evidence', target_id: evidence.id, details }, now, env.actor),
  ]);
  return outcome.ok
    ? { capture: toPageCapture(outcome.capture), evidence_added: [] }
    : { capture: null, evidence_added: await getEvidenceByIds(env.db, [failureId]) };
}
