import { z } from 'zod';
import { json, readQuery } from '../lib/http/json.js';
import { listJobs } from '../lib/repo/jobs.js';
import type { Env } from '../lib/ports.js';

export const JobsQuery = z.object({
  status: z.enum(['queued', 'running', 'done', 'failed', 'skipped']).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(200)
    .transform((n) => Math.min(n, 1000)),
});

/** GET /api/jobs: newest first. */
export async function handleJobs(request: Request, env: Env): Promise<Response> {
  const query = readQuery(request, JobsQuery);
  return json({ jobs: await listJobs(env.db, query.status, query.limit) });
}
