import { z } from 'zod';
import { isLoopback } from '../lib/auth/accounts.js';
import { answer } from '../lib/api/answer.js';
import { RoleRecord } from '../lib/api/records.js';
import { countAccounts } from '../lib/repo/accounts.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Session = answer(
  'session',
  z.object({
    signed_in: z.boolean(),
    actor: z.object({ type: z.string(), id: z.string().nullable(), name: z.string().nullable(), role: RoleRecord }).nullable(),
    csrf_token: z.string().nullable(),
    setup_required: z.boolean(),
    setup_allowed: z.boolean(),
  }),
);

/**
 * GET /api/auth/session: who the caller is (open to anyone, so the console can decide between its
 * sign-in page, the first-run page and the desk). Never a secret beyond the caller's own CSRF token.
 */
export async function handleSession(_request: Request, env: Env): Promise<Response> {
  const { actor } = env;
  const noAccounts = (await countAccounts(env.db)) === 0;
  return Session.send({
    signed_in: actor.role !== null,
    actor: actor.role !== null ? { type: actor.type, id: actor.id, name: actor.name, role: actor.role } : null,
    csrf_token: actor.csrfToken ?? null,
    setup_required: noAccounts,
    setup_allowed: noAccounts && isLoopback(actor.client),
  });
}

export const sessionRoute = route('get', '/api/auth/session', 'public', 'Who is signed in, and whether the first administrator is still to be created', {
  answer: Session,
  handler: handleSession,
});
