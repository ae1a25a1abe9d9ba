import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { KnowledgeEntryRecord } from '../lib/api/records.js';
import { moveKnowledgeEntry } from '../lib/review/knowledge.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

/** A knowledge entry after a move: promote and exclude answer alike. */
export const KnowledgeEntry = answer('entry', z.object({ entry: KnowledgeEntryRecord }));

/** POST /api/knowledge/{id}/promote-watchlist: the entry becomes `확정 DB 편입`; no body needed. */
export async function handleKnowledgePromote(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'knowledge entry');
  return KnowledgeEntry.send({ entry: await moveKnowledgeEntry(env, id, 'promote') });
}

export const knowledgePromoteRoute: RouteSpec = {
  method: 'post',
  path: '/api/knowledge/:id/promote-watchlist',
  access: 'operator',
  summary: 'Promote an entry to the watchlist (확정 DB 편입)',
  answer: KnowledgeEntry,
  handler: handleKnowledgePromote,
};
