import { json } from '../lib/http/json.js';
import { runRetention } from '../lib/review/retention.js';
import type { Env } from '../lib/ports.js';

/** POST /api/retention/run: the daily retention job, on demand; no body needed. */
export async function handleRetentionRun(_request: Request, env: Env): Promise<Response> {
  return json(await runRetention(env));
}
