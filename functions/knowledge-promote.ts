import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { KnowledgeEntryRecord } from '../lib/api/records.js';
import { moveKnowledgeEntry } from '../lib/review/knowledge.js';
import { recordHandler, route } from './route.js';

/** A knowledge entry after a move: promote and exclude answer alike. */
export const KnowledgeEntry = answer('entry', z.object({ entry: KnowledgeEntryRecord }));

/** POST /api/knowledge/{id}/promote-watchlist: the entry becomes `확정 DB 편입`; no body needed. */
export const handleKnowledgePromote = recordHandler('knowledge entry', KnowledgeEntry, async (env, id) => ({
  entry: await moveKnowledgeEntry(env, id, 'promote'),
}));

export const knowledgePromoteRoute = route('post', '/api/knowledge/:id/promote-watchlist', 'operator', 'Promote an entry to the watchlist (확정 DB 편입)', {
  answer: KnowledgeEntry,
  handler: handleKnowledgePromote,
});
