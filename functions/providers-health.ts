import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ProviderHealthRecord } from '../lib/api/records.js';
import { providersHealth } from '../lib/providers/admin.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const ProvidersHealth = answer('providersHealth', z.object({ status: z.enum(['ok', 'degraded', 'disabled']), providers: z.array(ProviderHealthRecord) }));

/** GET /api/providers/health: each provider with its last success and failure, and an overall status. */
export async function handleProvidersHealth(_request: Request, env: Env): Promise<Response> {
  return ProvidersHealth.send(await providersHealth(env));
}

export const providersHealthRoute = route('get', '/api/providers/health', 'operator', 'Providers with their last success and failure', {
  answer: ProvidersHealth,
  handler: handleProvidersHealth,
});
