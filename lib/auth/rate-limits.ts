import { errorResponse, ServiceError } from '../http/errors.js';
import { createRateLimiter, type RateLimit } from '../http/rate-limit.js';
import { auditStatement } from '../repo/audit.js';
import type { Env } from '../ports.js';
import { anonymousActor, type Actor } from './actor.js';
import { authorize, clientAddress, type Access } from './authenticate.js';

// Callers tracked at once: about 290 bytes each (measured), so a flood of distinct addresses holds at most 3 MB.
const MAX_CALLERS = 10_000;

/** The limiter of this process or Worker isolate; the router asks it before every limited route. */
export function callerLimits() {
  const limiter = createRateLimiter(MAX_CALLERS);
  const limits = {
    /**
     * The router's check for a limited route: the caller is identified and authorised, then counted.
     * A caller refused before it is known (a wrong token, no session) counts against its address:
     * guessing tokens is hammering too. The actor, or the 429 answer as a refusal (told apart by its
     * key, not by its class: an answer's class is the entry's choice, decisions/0060).
     */
    async admit(request: Request, env: Env, ctx: unknown, access: Access): Promise<{ actor: Actor } | { refusal: Response }> {
      let actor: Actor;
      try {
        actor = await authorize(request, env, ctx, access);
      } catch (error) {
        const refusal = await limits.check(request, env, anonymousActor(clientAddress(ctx)));
        if (refusal) return { refusal };
        throw error;
      }
      const refusal = await limits.check(request, env, actor);
      return refusal ? { refusal } : { actor };
    },
    /**
     * Counts the request against its caller: an account (its sessions together), a token, the admin
     * token, or before sign-in the client's address. Null when it may pass; otherwise the 429 answer.
     */
    async check(request: Request, env: Env, actor: Actor): Promise<Response | null> {
      const limit = limitOf(env, actor);
      const decision = limiter.take(callerKey(actor), limit, env.clock.now().getTime());
      if (decision.allowed) return null;
      // One record per episode of hammering, not one per refused request: an audit flood is itself a problem.
      if (decision.firstRefusal) await recordLimited(request, env, actor, limit);
      const error = new ServiceError(
        'rate_limited',
        `too many requests: at most ${limit.perSecond} a second (${limit.burst} at once) per ${callerKind(actor)}; try again in ${decision.retryAfterSeconds} s`,
      );
      return errorResponse(error, { 'retry-after': String(decision.retryAfterSeconds) });
    },
  };
  return limits;
}

function limitOf(env: Env, actor: Actor): RateLimit {
  const { config } = env;
  return actor.type === 'anonymous'
    ? { perSecond: config.SVC_RATE_LIMIT_ANONYMOUS_PER_SECOND, burst: config.SVC_RATE_LIMIT_ANONYMOUS_BURST }
    : { perSecond: config.SVC_RATE_LIMIT_PER_SECOND, burst: config.SVC_RATE_LIMIT_BURST };
}

// Ids and addresses only: a token's secret never becomes a key, a log field or an audit detail.
function callerKey(actor: Actor): string {
  if (actor.type === 'anonymous') return `address:${actor.client ?? 'unknown'}`;
  return `${actor.type}:${actor.id ?? ''}`;
}

const callerKind = (actor: Actor) => (actor.type === 'anonymous' ? 'address before sign-in' : actor.type === 'account' ? 'account' : 'token');

async function recordLimited(request: Request, env: Env, actor: Actor, limit: RateLimit): Promise<void> {
  const details = { per_second: limit.perSecond, burst: limit.burst, method: request.method, path: new URL(request.url).pathname };
  env.log.warn('caller rate limited', { caller: actor.type, id: actor.id, client: actor.client, ...details });
  // An address is not an account: a flood of addresses would otherwise fill the audit log.
  if (actor.type === 'anonymous') return;
  try {
    const event = { action: 'caller.rate_limited' as const, target_type: actor.type, target_id: actor.id, details };
    await auditStatement(env.db, event, env.clock.now().toISOString(), actor).run();
  } catch (error) {
    // The refusal stands without its record: a full disk must not turn a 429 into a 500.
    env.log.error('the rate limit could not be audited', { error: error instanceof Error ? error.message : String(error) });
  }
}
