import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ProviderRecord } from '../lib/api/records.js';
import { emergencyDisable } from '../lib/providers/admin.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const EmergencyDisable = answer('emergencyDisable', z.object({ disabled: z.array(z.string()), providers: z.array(ProviderRecord) }));

/** POST /api/providers/emergency-disable: every provider off at once; no body needed. */
export async function handleEmergencyDisable(_request: Request, env: Env): Promise<Response> {
  return EmergencyDisable.send(await emergencyDisable(env));
}

export const emergencyDisableRoute = route('post', '/api/providers/emergency-disable', 'admin', 'Switch every provider off at once', {
  answer: EmergencyDisable,
  handler: handleEmergencyDisable,
});
