import { answer } from '../lib/api/answer.js';
import { JobProgressRecord } from '../lib/api/records.js';
import { jobProgress } from '../lib/repo/jobs.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Progress = answer('progress', JobProgressRecord);

/** GET /api/jobs/progress: queued, running, done and failed per job type, rate, time left, failures. */
export async function handleJobsProgress(_request: Request, env: Env): Promise<Response> {
  return Progress.send(await jobProgress(env.db, env.clock.now()));
}

export const jobsProgressRoute = route('get', '/api/jobs/progress', 'operator', 'Work in flight per job type: counts, rate, time left, failures', {
  answer: Progress,
  handler: handleJobsProgress,
});
