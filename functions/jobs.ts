import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { JobRecord } from '../lib/api/records.js';
import { readQuery } from '../lib/http/json.js';
import { listJobs } from '../lib/repo/jobs.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const JobsQuery = z.object({
  status: z.enum(['queued', 'running', 'done', 'failed', 'skipped']).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(200)
    .transform((n) => Math.min(n, 1000)),
});

const Jobs = answer('jobs', z.object({ jobs: z.array(JobRecord) }));

/** GET /api/jobs: newest first. */
export async function handleJobs(request: Request, env: Env): Promise<Response> {
  const query = readQuery(request, JobsQuery);
  return Jobs.send({ jobs: await listJobs(env.db, query.status, query.limit) });
}

export const jobsRoute = route('get', '/api/jobs', 'operator', 'Analysis and enrichment jobs', { query: JobsQuery, answer: Jobs, handler: handleJobs });
