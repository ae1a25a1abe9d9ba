import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { JobProgressRecord, ProviderRecord, QueuePageRecord } from '../lib/api/records.js';
import { publicSettings } from '../lib/config.js';
import { providerRecords } from '../lib/providers/state.js';
import { jobProgress } from '../lib/repo/jobs.js';
import { countKnowledgeByState } from '../lib/repo/knowledge.js';
import { listQueue } from '../lib/repo/submissions.js';
import { DECISIONS, EVIDENCE_STATUSES, KNOWLEDGE_STATES, REVIEW_GROUPS } from '../lib/vocabulary.js';
import { QUEUE_PAGE_DEFAULT } from './review-queue.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Bootstrap = answer(
  'bootstrap',
  z.object({
    version: z.string(),
    queue: QueuePageRecord,
    providers: z.array(ProviderRecord),
    knowledge_counts: z.record(z.string(), z.number().int()),
    progress: JobProgressRecord,
    limits: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    statuses: z.array(z.enum(EVIDENCE_STATUSES)),
    decisions: z.array(z.enum(DECISIONS)),
    knowledge_states: z.array(z.enum(KNOWLEDGE_STATES)),
    groups: z.array(z.object({ key: z.string(), label: z.string() })),
  }),
);

/** GET /api/bootstrap: what the console needs to start; settings without any secret value. */
export async function handleBootstrap(_request: Request, env: Env): Promise<Response> {
  const [queue, providers, knowledgeCounts, progress] = await Promise.all([
    listQueue(env.db, { limit: QUEUE_PAGE_DEFAULT, offset: 0 }),
    providerRecords(env),
    countKnowledgeByState(env.db),
    jobProgress(env.db, env.clock.now()),
  ]);
  return Bootstrap.send({
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

export const bootstrapRoute = route('get', '/api/bootstrap', 'operator', "Everything the console's first screen needs", {
  answer: Bootstrap,
  handler: handleBootstrap,
});
