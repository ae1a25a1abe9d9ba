import { z } from 'zod';
import { json, readQuery } from '../lib/http/json.js';
import { listKnowledge } from '../lib/repo/knowledge.js';
import { KNOWLEDGE_STATES } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';

export const KnowledgeQuery = z.object({ state: z.enum(KNOWLEDGE_STATES).optional() });

/** GET /api/knowledge: entries, most recently changed first, optionally of one state. */
export async function handleKnowledgeList(request: Request, env: Env): Promise<Response> {
  const { state } = readQuery(request, KnowledgeQuery);
  return json({ entries: await listKnowledge(env.db, state) });
}
