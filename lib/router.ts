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

function routes() {
  const router = Router<RouteRequest, [Env, unknown?]>({ catch: unexpected });
  // Every route says who may call it; the check runs here, once, before the handler, which then
  // sees the caller as `env.actor` (handlers called directly, as in tests, act as the service).
  const route = (access: Access, handler: Handler): Handler => async (request, env, ctx) => {
    const actor = await authorize(request, env, ctx, access);
    return handler(request, { ...env, actor }, ctx);
  };
  router
    .get('/health', route('public', handleHealth))
    .get('/api/auth/session', route('public', handleSession))
    .post('/api/auth/login', route('public', handleLogin))
    .post('/api/auth/setup', route('public', handleSetup))
    .post('/api/auth/logout', route('operator', handleLogout))
    .get('/api/accounts', route('admin', handleAccountsList))
    .post('/api/accounts', route('admin', handleAccountCreate))
    .patch('/api/accounts/:id', route('admin', handleAccountUpdate))
    .post('/api/accounts/:id/revoke-sessions', route('admin', handleAccountRevokeSessions))
    .get('/api/tokens', route('admin', handleTokensList))
    .post('/api/tokens', route('admin', handleTokenCreate))
    .post('/api/tokens/:id/revoke', route('admin', handleTokenRevoke))
    .patch('/api/providers/:id', route('admin', handleProviderUpdate))
    .post('/api/providers/emergency-disable', route('admin', handleEmergencyDisable))
    .post('/api/retention/run', route('admin', handleRetentionRun))
    .post('/api/submissions/reload', route('operator', handleSubmissionsReload))
    .post('/api/submissions/:id/rerun-enrichment', route('operator', handleSubmissionRerun))
    .post('/api/search/manual', route('operator', handleManualSearch))
    .get('/api/jobs', route('operator', handleJobs))
    .get('/api/jobs/progress', route('operator', handleJobsProgress))
    .get('/api/bootstrap', route('operator', handleBootstrap))
    .get('/api/review-queue', route('operator', handleReviewQueue))
    .get('/api/submissions/:id/review', route('operator', handleSubmissionReview))
    .post('/api/submissions/:id/decision', route('operator', handleSubmissionDecision))
    .post('/api/evidence/:id/status', route('operator', handleEvidenceStatus))
    .get('/api/knowledge', route('operator', handleKnowledgeList))
    .post('/api/knowledge/:id/promote-watchlist', route('operator', handleKnowledgePromote))
    .post('/api/knowledge/:id/exclude-watchlist', route('operator', handleKnowledgeExclude))
    .get('/api/providers', route('operator', handleProvidersList))
    .get('/api/providers/health', route('operator', handleProvidersHealth))
    .get('/api/audit-events', route('operator', handleAuditEvents))
    .get('/media/*', route('operator', handleMedia))
    .all('/api/*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    })
    // The console's files are the sign-in page too: open to all, and they hold no data.
    .get('*', route('public', handleConsole))
    .all('*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    });
  return router;
}
