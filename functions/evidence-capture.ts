import { z } from 'zod';
import { captureEvidencePage } from '../lib/enrichment/capture.js';
import { errorResponse, notFound } from '../lib/http/errors.js';
import { answer } from '../lib/api/answer.js';
import { EvidenceRecord, PageCaptureRecord } from '../lib/api/records.js';
import { MEDIA_HEADERS, readMediaBytes } from '../lib/http/media.js';
import { getPageCaptureRow } from '../lib/repo/captures.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import { recordHandler, route } from './route.js';

const PageCapture = answer('pageCapture', z.object({ capture: PageCaptureRecord.nullable(), evidence_added: z.array(EvidenceRecord) }));

/** POST /api/evidence/{id}/capture: fetch and keep the page of a web evidence item now. */
export const handleEvidenceCapture = recordHandler('evidence', PageCapture, captureEvidencePage);

function refuse(): Response {
  return errorResponse(notFound('no such page capture'), MEDIA_HEADERS);
}

/**
 * GET /api/captures/{id}: the stored bytes of a page capture as plain text, never as a page: the
 * same sandboxing CSP and nosniff as /media, so no browser runs what the page held.
 */
export async function handleCaptureFile(request: ParamRequest, env: Env): Promise<Response> {
  let id = '';
  try {
    id = pathParam(request, 'id', 'page capture');
  } catch {
    return refuse();
  }
  const row = await getPageCaptureRow(env.db, id);
  const bytes = row?.media_path ? await readMediaBytes(env.blobs, row.media_path) : null;
  if (!row || !bytes) return refuse();
  // The page's own charset, when it named a plain one, so the text reads as it did.
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(row.content_type ?? '')?.[1];
  return new Response(new Uint8Array(bytes), {
    headers: {
      'content-type': `text/plain; charset=${charset ?? 'utf-8'}`,
      'content-length': String(bytes.length),
      'content-disposition': `inline; filename="${row.id}.txt"`,
      'cache-control': 'private, max-age=300',
      ...MEDIA_HEADERS,
    },
  });
}

export const evidenceCaptureRoute = route(
  'post',
  '/api/evidence/:id/capture',
  'operator',
  'Fetch and keep the page of a web evidence item now (a failure is stored as failure evidence)',
  { answer: PageCapture, handler: handleEvidenceCapture },
);

export const captureFileRoute = route('get', '/api/captures/:id', 'operator', 'A page capture as stored, as plain text (never rendered as a page)', {
  file: { types: ['text/plain'], description: 'The page bytes as fetched, with the same Content-Security-Policy and nosniff as /media' },
  handler: handleCaptureFile,
});
