import { answer } from '../lib/api/answer.js';
import { RetentionReportRecord } from '../lib/api/records.js';
import { runRetention } from '../lib/review/retention.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Retention = answer('retention', RetentionReportRecord);

/** POST /api/retention/run: the daily retention job, on demand; no body needed. */
export async function handleRetentionRun(_request: Request, env: Env): Promise<Response> {
  return Retention.send(await runRetention(env));
}

export const retentionRunRoute = route('post', '/api/retention/run', 'admin', 'Delete downloaded and derived images older than the retention period now', {
  answer: Retention,
  handler: handleRetentionRun,
});
