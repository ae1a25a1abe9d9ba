import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ManualSearchRecord } from '../lib/api/records.js';
import { manualSearch } from '../lib/enrichment/manual-search.js';
import { cleanQueryText } from '../lib/enrichment/queries.js';
import { invalid } from '../lib/http/errors.js';
import { readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const ManualSearchBody = z
  .object({
    provider: z.enum(['regional', 'global_search']),
    query: z.string().trim().min(1).max(200),
    type: z.enum(['image', 'blog', 'web']).default('image'),
    submission_id: z.string().min(1).max(200).optional(),
  })
  .strict();

const ManualSearch = answer('manualSearch', ManualSearchRecord);

/** POST /api/search/manual: only the text query is sent to the provider. */
export async function handleManualSearch(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, ManualSearchBody);
  const query = cleanQueryText(body.query);
  if (!query) throw invalid('the query is empty or its text is broken (encoding or template placeholders)');
  return ManualSearch.send(await manualSearch(env, { ...body, query }));
}

export const manualSearchRoute = route('post', '/api/search/manual', 'operator', 'Search a provider by hand, optionally keeping the results as evidence', {
  body: ManualSearchBody,
  answer: ManualSearch,
  handler: handleManualSearch,
});
