import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { KnowledgeEntryRecord } from '../lib/api/records.js';
import { readQuery } from '../lib/http/json.js';
import { listKnowledge } from '../lib/repo/knowledge.js';
import { KNOWLEDGE_STATES } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const KnowledgeQuery = z.object({ state: z.enum(KNOWLEDGE_STATES).optional() });

const Knowledge = answer('knowledge', z.object({ entries: z.array(KnowledgeEntryRecord) }));

/** GET /api/knowledge: entries, most recently changed first, optionally of one state. */
export async function handleKnowledgeList(request: Request, env: Env): Promise<Response> {
  const { state } = readQuery(request, KnowledgeQuery);
  return Knowledge.send({ entries: await listKnowledge(env.db, state) });
}

export const knowledgeListRoute = route('get', '/api/knowledge', 'operator', 'Attention candidates and the watchlist', {
  query: KnowledgeQuery,
  answer: Knowledge,
  handler: handleKnowledgeList,
});
