import { json } from '../lib/http/json.js';
import { jobProgress } from '../lib/repo/jobs.js';
import type { Env } from '../lib/ports.js';

/** GET /api/jobs/progress: queued, running, done and failed per job type, rate, time left, failures. */
export async function handleJobsProgress(_request: Request, env: Env): Promise<Response> {
  return json(await jobProgress(env.db, env.clock.now()));
}
