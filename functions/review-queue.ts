import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { QueuePageRecord } from '../lib/api/records.js';
import { jsonText, readQuery } from '../lib/http/json.js';
import { listQueue } from '../lib/repo/submissions.js';
import { keptWhileUnchanged } from '../lib/review/kept-answers.js';
import { limitParam, offsetParam } from '../lib/review/query.js';
import { DECISIONS, RISK_LEVELS } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const QUEUE_PAGE_DEFAULT = 50;
export const QUEUE_PAGE_MAX = 200;
const ENRICHMENT_STATUSES = ['pending', 'running', 'done', 'failed', 'skipped'] as const;

/** The queue's filters, shared by the queue and its export. */
export const queueFilterParams = {
  decision: z.enum([...DECISIONS, 'undecided']).optional(),
  level: z.enum(RISK_LEVELS).optional(),
  enrichment: z.enum(ENRICHMENT_STATUSES).optional(),
  attention: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  /** Pictures that show anyone (a person box or a face), or nobody. */
  people: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  q: z.string().trim().min(1).max(200).optional(),
};

export const ReviewQueueQuery = z
  .object({
    limit: limitParam(QUEUE_PAGE_DEFAULT, QUEUE_PAGE_MAX),
    offset: offsetParam,
    cursor: z.string().min(1).max(2048).optional(),
    ...queueFilterParams,
  })
  .refine((query) => !(query.cursor && query.offset), { message: 'offset: not with a cursor', path: ['offset'] });

export const ReviewQueue = answer('queue', QueuePageRecord);

/**
 * GET /api/review-queue: undecided first, then risk high to low; `total` counts the whole filter;
 * `next_cursor` reaches the next page at the cost of the first. The same page is the same for
 * every caller who may read it, so it is kept until something is committed.
 */
export async function handleReviewQueue(request: Request, env: Env): Promise<Response> {
  const query = readQuery(request, ReviewQueueQuery);
  return jsonText(await keptWhileUnchanged(env.db, `queue ${JSON.stringify(query)}`, async () => ReviewQueue.text(await listQueue(env.db, query))));
}

export const reviewQueueRoute = route('get', '/api/review-queue', 'operator', 'The review queue: undecided first, then risk high to low', {
  query: ReviewQueueQuery,
  answer: ReviewQueue,
  handler: handleReviewQueue,
});
