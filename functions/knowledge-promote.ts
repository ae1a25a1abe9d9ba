import { json } from '../lib/http/json.js';
import { moveKnowledgeEntry } from '../lib/review/knowledge.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';

/** POST /api/knowledge/{id}/promote-watchlist: the entry becomes `확정 DB 편입`; no body needed. */
export async function handleKnowledgePromote(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'knowledge entry');
  return json({ entry: await moveKnowledgeEntry(env, id, 'promote') });
}
