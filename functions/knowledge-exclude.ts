import { moveKnowledgeEntry } from '../lib/review/knowledge.js';
import { KnowledgeEntry } from './knowledge-promote.js';
import { recordHandler, route } from './route.js';

/** POST /api/knowledge/{id}/exclude-watchlist: the entry becomes `오탐 제외`; no body needed. */
export const handleKnowledgeExclude = recordHandler('knowledge entry', KnowledgeEntry, async (env, id) => ({
  entry: await moveKnowledgeEntry(env, id, 'exclude'),
}));

export const knowledgeExcludeRoute = route('post', '/api/knowledge/:id/exclude-watchlist', 'operator', 'Exclude an entry as a false match (오탐 제외)', {
  answer: KnowledgeEntry,
  handler: handleKnowledgeExclude,
});
