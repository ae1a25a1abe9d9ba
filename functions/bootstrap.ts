import { publicSettings } from '../lib/config.js';
import { json } from '../lib/http/json.js';
import { providerRecords } from '../lib/providers/state.js';
import { jobProgress } from '../lib/repo/jobs.js';
import { countKnowledgeByState } from '../lib/repo/knowledge.js';
import { listQueue } from '../lib/repo/submissions.js';
import { DECISIONS, EVIDENCE_STATUSES, KNOWLEDGE_STATES, REVIEW_GROUPS } from '../lib/vocabulary.js';
import { QUEUE_PAGE_DEFAULT } from './review-queue.js';
import type { Env } from '../lib/ports.js';

/** GET /api/bootstrap: what the console needs to start; settings without any secret value. */
export async function handleBootstrap(_request: Request, env: Env): Promise<Response> {
  const [queue, providers, knowledgeCounts, progress] = await Promise.all([
    listQueue(env.db, { limit: QUEUE_PAGE_DEFAULT, offset: 0 }),
    providerRecords(env),
    countKnowledgeByState(env.db),
    jobProgress(env.db, env.clock.now()),
  ]);
  return json({
    version: env.version,
    queue,
    providers,
    knowledge_counts: knowledgeCounts,
    progress,
    limits: publicSettings(env.config),
    statuses: [...EVIDENCE_STATUSES],
    decisions: [...DECISIONS],
    knowledge_states: [...KNOWLEDGE_STATES],
    groups: REVIEW_GROUPS.map((g) => ({ ...g })),
  });
}
