import { json } from '../lib/http/json.js';
import { emergencyDisable } from '../lib/providers/admin.js';
import type { Env } from '../lib/ports.js';

/** POST /api/providers/emergency-disable: every provider off at once; no body needed. */
export async function handleEmergencyDisable(_request: Request, env: Env): Promise<Response> {
  return json(await emergencyDisable(env));
}
