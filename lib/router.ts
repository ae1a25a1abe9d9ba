import { Router } from 'itty-router';
import { handleAuditEvents } from '../functions/audit-events.js';
import { handleBootstrap } from '../functions/bootstrap.js';
import { handleEvidenceStatus } from '../functions/evidence-status.js';
import { handleKnowledgeExclude } from '../functions/knowledge-exclude.js';
import { handleKnowledgeList } from '../functions/knowledge-list.js';
import { handleKnowledgePromote } from '../functions/knowledge-promote.js';
import { handleEmergencyDisable } from '../functions/providers-emergency-disable.js';
import { handleProvidersHealth } from '../functions/providers-health.js';
import { handleProvidersList } from '../functions/providers-list.js';
import { handleRetentionRun } from '../functions/retention-run.js';
import { handleReviewQueue } from '../functions/review-queue.js';
import { handleSubmissionDecision } from '../functions/submission-decision.js';
import { handleSubmissionReview } from '../functions/submission-review.js';
import { handleConsole } from '../functions/console.js';
import { handleHealth } from '../functions/health.js';
import { handleJobs } from '../functions/jobs.js';
import { handleJobsProgress } from '../functions/jobs-progress.js';
import { handleMedia } from '../functions/media.js';
import { handleProviderUpdate } from '../functions/providers-update.js';
import { handleManualSearch } from '../functions/search-manual.js';
import { handleSubmissionsReload } from '../functions/submissions-reload.js';
import { handleSubmissionRerun } from '../functions/submissions-rerun.js';
import { handleAccountCreate, handleAccountRevokeSessions, handleAccountsList, handleAccountUpdate } from '../functions/accounts.js';
import { handleAlerts } from '../functions/alerts.js';
import { handleLogin } from '../functions/auth-login.js';
import { handleLogout } from '../functions/auth-logout.js';
import { handleSession } from '../functions/auth-session.js';
import { handleSetup } from '../functions/auth-setup.js';
import { handleTokenCreate, handleTokenRevoke, handleTokensList } from '../functions/tokens.js';
import { authorize, type Access } from './auth/authenticate.js';
import type { Env } from './env.js';
import { errorResponse, invalid, notFound, ServiceError } from './errors.js';

export type RouteRequest = Request & { params: Record<string, string> };
type Handler = (request: RouteRequest, env: Env, ctx?: unknown) => Promise<Response>;

export interface App {
  fetch(request: Request, env: Env, ctx?: unknown): Promise<Response>;
}

/**
 * Every route, registered explicitly. The router is a plain function: tests call
 * `createRouter().fetch(new Request(...), env)` with no server.
 *
 * Whatever arrives, the answer has CONTRACT.md's error shape: a request whose URL cannot be parsed
 * (a malformed Host header becomes part of it) is refused before any route sees it, and anything
 * thrown, even outside a handler, becomes a JSON error without a stack.
 */
export function createRouter(): App {
  const router = routes();
  return {
    async fetch(request, env, ctx) {
      if (!URL.canParse(request.url)) return errorResponse(invalid('the request URL or its Host header is not valid'));
      try {
        return await router.fetch(request as RouteRequest, env, ctx);
      } catch (err) {
        return unexpected(err, request, env);
      }
    },
  };
}

function unexpected(err: unknown, request: Request, env: Env): Response {
  if (!(err instanceof ServiceError)) {
    env.log.error('unexpected error', { method: request.method, path: new URL(request.url).pathname, error: String(err) });
  }
  return errorResponse(err);
}

type Method = 'get' | 'post' | 'patch';

export interface RouteSpec {
  method: Method;
  path: string;
  /** Who may call it: checked by the router, before the handler, for every route alike. */
  access: Access;
  handler: Handler;
}

/** Every route of the API and the console, with the role it needs. */
export const ROUTES: readonly RouteSpec[] = [
  { method: 'get', path: '/health', access: 'public', handler: handleHealth },
  { method: 'get', path: '/api/auth/session', access: 'public', handler: handleSession },
  { method: 'post', path: '/api/auth/login', access: 'public', handler: handleLogin },
  { method: 'post', path: '/api/auth/setup', access: 'public', handler: handleSetup },
  { method: 'post', path: '/api/auth/logout', access: 'operator', handler: handleLogout },
  { method: 'get', path: '/api/accounts', access: 'admin', handler: handleAccountsList },
  { method: 'post', path: '/api/accounts', access: 'admin', handler: handleAccountCreate },
  { method: 'patch', path: '/api/accounts/:id', access: 'admin', handler: handleAccountUpdate },
  { method: 'post', path: '/api/accounts/:id/revoke-sessions', access: 'admin', handler: handleAccountRevokeSessions },
  { method: 'get', path: '/api/tokens', access: 'admin', handler: handleTokensList },
  { method: 'post', path: '/api/tokens', access: 'admin', handler: handleTokenCreate },
  { method: 'post', path: '/api/tokens/:id/revoke', access: 'admin', handler: handleTokenRevoke },
  { method: 'patch', path: '/api/providers/:id', access: 'admin', handler: handleProviderUpdate },
  { method: 'post', path: '/api/providers/emergency-disable', access: 'admin', handler: handleEmergencyDisable },
  { method: 'post', path: '/api/retention/run', access: 'admin', handler: handleRetentionRun },
  { method: 'get', path: '/api/alerts', access: 'admin', handler: handleAlerts },
  { method: 'post', path: '/api/submissions/reload', access: 'operator', handler: handleSubmissionsReload },
  { method: 'post', path: '/api/submissions/:id/rerun-enrichment', access: 'operator', handler: handleSubmissionRerun },
  { method: 'post', path: '/api/search/manual', access: 'operator', handler: handleManualSearch },
  { method: 'get', path: '/api/jobs', access: 'operator', handler: handleJobs },
  { method: 'get', path: '/api/jobs/progress', access: 'operator', handler: handleJobsProgress },
  { method: 'get', path: '/api/bootstrap', access: 'operator', handler: handleBootstrap },
  { method: 'get', path: '/api/review-queue', access: 'operator', handler: handleReviewQueue },
  { method: 'get', path: '/api/submissions/:id/review', access: 'operator', handler: handleSubmissionReview },
  { method: 'post', path: '/api/submissions/:id/decision', access: 'operator', handler: handleSubmissionDecision },
  { method: 'post', path: '/api/evidence/:id/status', access: 'operator', handler: handleEvidenceStatus },
  { method: 'get', path: '/api/knowledge', access: 'operator', handler: handleKnowledgeList },
  { method: 'post', path: '/api/knowledge/:id/promote-watchlist', access: 'operator', handler: handleKnowledgePromote },
  { method: 'post', path: '/api/knowledge/:id/exclude-watchlist', access: 'operator', handler: handleKnowledgeExclude },
  { method: 'get', path: '/api/providers', access: 'operator', handler: handleProvidersList },
  { method: 'get', path: '/api/providers/health', access: 'operator', handler: handleProvidersHealth },
  { method: 'get', path: '/api/audit-events', access: 'operator', handler: handleAuditEvents },
  { method: 'get', path: '/media/*', access: 'operator', handler: handleMedia },
];

function routes() {
  const router = Router<RouteRequest, [Env, unknown?]>({ catch: unexpected });
  // The one access check: the handler then sees the caller as `env.actor` (handlers called
  // directly, as in tests, act as the service).
  const guarded = ({ access, handler }: RouteSpec): Handler => async (request, env, ctx) => {
    const actor = await authorize(request, env, ctx, access);
    return handler(request, { ...env, actor }, ctx);
  };
  for (const spec of ROUTES) router[spec.method](spec.path, guarded(spec));
  router
    .all('/api/*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    })
    // The console's files are the sign-in page too: open to all, and they hold no data.
    .get('*', guarded({ method: 'get', path: '*', access: 'public', handler: handleConsole }))
    .all('*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    });
  return router;
}
