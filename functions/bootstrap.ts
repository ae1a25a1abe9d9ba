import type { Env } from '../lib/env.js';
import { publicSettings } from '../lib/config.js';
import { jsonText } from '../lib/http.js';
import { providerRecords } from '../lib/provider-state.js';
import { jobProgress } from '../lib/repo/jobs.js';
import { countKnowledgeByState } from '../lib/repo/knowledge.js';
import { listQueue, queuePageJson } from '../lib/repo/submissions.js';
import { DECISIONS, EVIDENCE_STATUSES, KNOWLEDGE_STATES, REVIEW_GROUPS } from '../lib/vocabulary.js';
import { QUEUE_PAGE_DEFAULT } from './review-queue.js';

/** GET /api/bootstrap: what the console needs to start; settings without any secret value. */
export async function handleBootstrap(_request: Request, env: Env): Promise<Response> {
  const [queue, providers, knowledgeCounts, progress] = await Promise.all([
    listQueue(env.db, { limit: QUEUE_PAGE_DEFAULT, offset: 0 }),
    providerRecords(env),
    countKnowledgeByState(env.db),
    jobProgress(env.db, env.clock.now()),
  ]);
  // The queue page's records are JSON text already; the rest is serialized around it.
  const rest = JSON.stringify({
    version: env.version,
    providers,
    knowledge_counts: knowledgeCounts,
    progress,
    limits: publicSettings(env.config),
    statuses: [...EVIDENCE_STATUSES],
    decisions: [...DECISIONS],
    knowledge_states: [...KNOWLEDGE_STATES],
    groups: REVIEW_GROUPS.map((g) => ({ ...g })),
  });
  return jsonText(`{"queue":${queuePageJson(queue)},${rest.slice(1)}`);
}
