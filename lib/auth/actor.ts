/** Who acts: a signed-in account, a personal API token, the SVC_ADMIN_TOKEN, or the service itself (jobs, schedules). */
export type Role = 'operator' | 'admin';
export const ROLES: readonly Role[] = ['operator', 'admin'];

export interface Actor {
  type: 'account' | 'token' | 'admin_token' | 'system' | 'anonymous';
  /** The account or token id; null for the admin token, the service and anonymous callers. */
  id: string | null;
  /** Shown in the audit log beside the id (a username or a token's name); never a secret. */
  name: string | null;
  role: Role | null;
  /** The caller's address as the server saw it; null for the service's own work. */
  client: string | null;
  /** Set for a browser session: the token every state-changing request must echo (CSRF). */
  csrfToken?: string;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, name: 'service', role: null, client: null };

export const anonymousActor = (client: string | null): Actor => ({ type: 'anonymous', id: null, name: null, role: null, client });

/** An admin may do everything an operator may. */
export function hasRole(actor: Actor, needed: Role): boolean {
  if (actor.role === null) return false;
  return needed === 'operator' || actor.role === 'admin';
}
