import { json } from '../lib/http/json.js';
import { providersHealth } from '../lib/providers/admin.js';
import type { Env } from '../lib/ports.js';

/** GET /api/providers/health: each provider with its last success and failure, and an overall status. */
export async function handleProvidersHealth(_request: Request, env: Env): Promise<Response> {
  return json(await providersHealth(env));
}
