import { notFound } from '../http/errors.js';
import { auditKnowledgeMoveStatement } from '../repo/audit.js';
import { getKnowledgeEntry, moveKnowledgeStateStatement, type KnowledgeEntry } from '../repo/knowledge.js';
import { WATCHLIST_CONFIRMED, WATCHLIST_EXCLUDED } from '../vocabulary.js';
import type { Env } from '../ports.js';

const MOVES = {
  promote: { to: WATCHLIST_CONFIRMED, action: 'knowledge.promote' },
  exclude: { to: WATCHLIST_EXCLUDED, action: 'knowledge.exclude' },
} as const;

export type KnowledgeMove = keyof typeof MOVES;

/**
 * Promote confirms an entry into the watchlist, exclude marks it a false positive. Either works
 * from any other state, so an operator can correct a mistaken promote or exclude; only a decision
 * creates a `주의 후보`. Repeating a move is idempotent: the entry and the audit log stay as they were.
 */
export async function moveKnowledgeEntry(env: Env, entryId: string, move: KnowledgeMove): Promise<KnowledgeEntry> {
  const { db } = env;
  if (!(await getKnowledgeEntry(db, entryId))) throw notFound(`unknown knowledge entry: ${entryId}`);
  const { to, action } = MOVES[move];
  const now = env.clock.now().toISOString();
  await db.batch([auditKnowledgeMoveStatement(db, entryId, action, to, now, env.actor), moveKnowledgeStateStatement(db, entryId, to, now)]);
  const entry = await getKnowledgeEntry(db, entryId);
  if (!entry) throw notFound(`unknown knowledge entry: ${entryId}`);
  return entry;
}
