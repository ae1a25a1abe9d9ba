import { ServiceError } from '../http/errors.js';
import { findSession, useApiToken } from '../repo/accounts.js';
import { anonymousActor, hasRole, type Actor, type Role } from './actor.js';
import { sameSecret, secretHash } from './secrets.js';
import type { Env } from '../ports.js';

/** The console's session cookie; its value is a random secret whose SHA-256 is the session's key. */
export const SESSION_COOKIE = 'svc_session';
/** The header a browser session sends on every state-changing request (CSRF). */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Who may call a route: anyone, or a caller with at least this role. */
export type Access = 'public' | Role;

/**
 * The caller's address: the socket's under the Node adapter, the one the Worker entry read from
 * Cloudflare's `cf-connecting-ip`; none when a test calls the router.
 */
export function clientAddress(ctx: unknown): string | null {
  const given = ctx as { req?: { socket?: { remoteAddress?: string } }; clientAddress?: string | null } | undefined;
  return given?.req?.socket?.remoteAddress ?? given?.clientAddress ?? null;
}

export function readCookie(request: Request, name: string): string | null {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

const unauthenticated = (message: string) => new ServiceError('unauthenticated', message);
const forbidden = (message: string) => new ServiceError('forbidden', message);

/**
 * Who is calling. A bearer token is the admin token or a personal API token; a wrong one is refused
 * at once (a script should learn its token is bad, not act anonymously). Otherwise the session
 * cookie, if it names a live session; otherwise anonymous.
 */
export async function identify(request: Request, env: Env, client: string | null): Promise<Actor> {
  const now = env.clock.now().toISOString();
  const authorization = request.headers.get('authorization');
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw unauthenticated('the Authorization header must be "Bearer <token>"');
    const presented = match[1];
    if (env.config.SVC_ADMIN_TOKEN && sameSecret(presented, env.config.SVC_ADMIN_TOKEN)) {
      return { type: 'admin_token', id: null, name: 'SVC_ADMIN_TOKEN', role: 'admin', client };
    }
    const token = await useApiToken(env.db, secretHash(presented), now);
    if (!token) throw unauthenticated('the token is not valid (unknown or revoked)');
    return { type: 'token', id: token.id, name: token.name, role: token.role, client };
  }
  const cookie = readCookie(request, SESSION_COOKIE);
  if (cookie) {
    const session = await findSession(env.db, secretHash(cookie), now);
    if (session) return { type: 'account', id: session.account_id, name: session.username, role: session.role, client, csrfToken: session.csrf_token };
  }
  return anonymousActor(client);
}

/**
 * The router's one check before any handler runs: the role the route needs, and for a browser
 * session on a state-changing request, the CSRF token and a same-origin Origin header.
 */
export async function authorize(request: Request, env: Env, ctx: unknown, access: Access): Promise<Actor> {
  const actor = await identify(request, env, clientAddress(ctx));
  const unsafe = !SAFE_METHODS.has(request.method);
  // Browsers name the page that sent a request; another site's page may never change anything here.
  // Hosts are compared, not schemes: behind a TLS proxy the service itself sees http.
  const origin = request.headers.get('origin');
  if (unsafe && origin !== null && hostOf(origin) !== new URL(request.url).host) throw forbidden('the request comes from another site');
  if (actor.csrfToken && unsafe && access !== 'public') {
    const presented = request.headers.get(CSRF_HEADER);
    if (!presented || !sameSecret(presented, actor.csrfToken)) throw forbidden('the CSRF token is missing or wrong; reload the console');
  }
  if (access === 'public') return actor;
  if (actor.role === null) throw unauthenticated('sign in first (no valid session or token)');
  if (!hasRole(actor, access)) throw forbidden(`this needs the ${access} role`);
  return actor;
}

/** The session cookie: HttpOnly, SameSite=Strict, and Secure when the console is reached over https. */
export function sessionCookie(request: Request, secret: string | null, maxAgeSeconds: number): string {
  const https = new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  const value = secret ?? '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${secret ? maxAgeSeconds : 0}${https ? '; Secure' : ''}`;
}
