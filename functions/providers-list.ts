import { json } from '../lib/http/json.js';
import { providerRecords } from '../lib/providers/state.js';
import type { Env } from '../lib/ports.js';

/** GET /api/providers: effective state and the names of missing variables, never values. */
export async function handleProvidersList(_request: Request, env: Env): Promise<Response> {
  return json({ providers: await providerRecords(env) });
}
