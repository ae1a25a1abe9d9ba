import { caseBundle } from '../lib/bundle/case.js';
import { zipStream } from '../lib/bundle/zip.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

/**
 * GET /api/submissions/{id}/bundle: the case as a ZIP (images, page captures, summary, audit
 * events, manifest.json with every file's SHA-256), streamed one file at a time.
 */
export async function handleSubmissionBundle(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'submission');
  const bundle = await caseBundle(env, id, env.actor);
  return new Response(zipStream(bundle.files), {
    headers: {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="case-${bundle.submission.id.replace(/[^A-Za-z0-9._-]/g, '_')}.zip"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}

export const submissionBundleRoute = route(
  'get',
  '/api/submissions/:id/bundle',
  'operator',
  'The case as a ZIP: images, page captures, cited summary, audit events and manifest.json with SHA-256s',
  {
    file: { types: ['application/zip'], description: 'A ZIP whose manifest.json lists every file with its SHA-256, source URL, fetch time and evidence' },
    handler: handleSubmissionBundle,
  },
);
