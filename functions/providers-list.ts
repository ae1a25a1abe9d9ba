import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ProviderRecord } from '../lib/api/records.js';
import { providerRecords } from '../lib/providers/state.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Providers = answer('providers', z.object({ providers: z.array(ProviderRecord) }));

/** GET /api/providers: effective state and the names of missing variables, never values. */
export async function handleProvidersList(_request: Request, env: Env): Promise<Response> {
  return Providers.send({ providers: await providerRecords(env) });
}

export const providersListRoute = route('get', '/api/providers', 'operator', 'Providers with their switches, settings and quota', {
  answer: Providers,
  handler: handleProvidersList,
});
