import { z } from 'zod';
import type { Env } from '../lib/env.js';
import { json, readQuery } from '../lib/http.js';
import { listQueue } from '../lib/repo/submissions.js';
import { limitParam, offsetParam } from '../lib/review/query.js';
import { DECISIONS, RISK_LEVELS } from '../lib/vocabulary.js';

export const QUEUE_PAGE_DEFAULT = 50;
export const QUEUE_PAGE_MAX = 200;

export const ReviewQueueQuery = z.object({
  limit: limitParam(QUEUE_PAGE_DEFAULT, QUEUE_PAGE_MAX),
  offset: offsetParam,
  decision: z.enum([...DECISIONS, 'undecided']).optional(),
  level: z.enum(RISK_LEVELS).optional(),
});

/** GET /api/review-queue: undecided first, then risk high to low; `total` counts the whole filter. */
export async function handleReviewQueue(request: Request, env: Env): Promise<Response> {
  const query = readQuery(request, ReviewQueueQuery);
  return json(await listQueue(env.db, query));
}
