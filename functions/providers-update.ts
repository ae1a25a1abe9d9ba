import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ProviderRecord } from '../lib/api/records.js';
import { notFound } from '../lib/http/errors.js';
import { readBody } from '../lib/http/json.js';
import { providerRecord } from '../lib/providers/state.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import { isProviderId } from '../lib/providers/catalog.js';
import { auditStatement } from '../lib/repo/audit.js';
import { setProviderSwitchStatement } from '../lib/repo/providers.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const ProviderUpdateBody = z.object({ enabled: z.boolean() }).strict();

const Provider = answer('provider', z.object({ provider: ProviderRecord }));

/** PATCH /api/providers/{id}: the stored switch, kept across restarts. */
export async function handleProviderUpdate(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'provider');
  if (!isProviderId(id)) throw notFound(`unknown provider: ${id}`);
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, ProviderUpdateBody);
  const now = env.clock.now().toISOString();
  await env.db.batch([
    setProviderSwitchStatement(env.db, id, body.enabled, 'operator', now),
    auditStatement(env.db, { action: 'provider.switch', target_type: 'provider', target_id: id, details: { enabled: body.enabled } }, now, env.actor),
  ]);
  return Provider.send({ provider: await providerRecord(env, id) });
}

export const providerUpdateRoute = route('patch', '/api/providers/:id', 'admin', 'Switch a provider on or off', {
  body: ProviderUpdateBody,
  answer: Provider,
  handler: handleProviderUpdate,
});
