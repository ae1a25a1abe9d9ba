import { isLoopback } from '../lib/auth/accounts.js';
import { json } from '../lib/http/json.js';
import { countAccounts } from '../lib/repo/accounts.js';
import type { Env } from '../lib/ports.js';

/**
 * GET /api/auth/session: who the caller is (open to anyone, so the console can decide between its
 * sign-in page, the first-run page and the desk). Never a secret beyond the caller's own CSRF token.
 */
export async function handleSession(_request: Request, env: Env): Promise<Response> {
  const { actor } = env;
  const noAccounts = (await countAccounts(env.db)) === 0;
  return json({
    signed_in: actor.role !== null,
    actor: actor.role !== null ? { type: actor.type, id: actor.id, name: actor.name, role: actor.role } : null,
    csrf_token: actor.csrfToken ?? null,
    setup_required: noAccounts,
    setup_allowed: noAccounts && isLoopback(actor.client),
  });
}
