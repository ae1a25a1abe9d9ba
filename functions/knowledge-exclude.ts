import { moveKnowledgeEntry } from '../lib/review/knowledge.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import { KnowledgeEntry } from './knowledge-promote.js';
import type { RouteSpec } from './route.js';

/** POST /api/knowledge/{id}/exclude-watchlist: the entry becomes `오탐 제외`; no body needed. */
export async function handleKnowledgeExclude(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'knowledge entry');
  return KnowledgeEntry.send({ entry: await moveKnowledgeEntry(env, id, 'exclude') });
}

export const knowledgeExcludeRoute: RouteSpec = {
  method: 'post',
  path: '/api/knowledge/:id/exclude-watchlist',
  access: 'operator',
  summary: 'Exclude an entry as a false match (오탐 제외)',
  answer: KnowledgeEntry,
  handler: handleKnowledgeExclude,
};
