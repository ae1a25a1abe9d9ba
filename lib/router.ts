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
  const route = (handler: Handler) => handler;
  router
    .get('/health', route(handleHealth))
    .patch('/api/providers/:id', route(handleProviderUpdate))
    .post('/api/submissions/reload', route(handleSubmissionsReload))
    .post('/api/submissions/:id/rerun-enrichment', route(handleSubmissionRerun))
    .post('/api/search/manual', route(handleManualSearch))
    .get('/api/jobs', route(handleJobs))
    .get('/api/jobs/progress', route(handleJobsProgress))
    .get('/api/bootstrap', route(handleBootstrap))
    .get('/api/review-queue', route(handleReviewQueue))
    .get('/api/submissions/:id/review', route(handleSubmissionReview))
    .post('/api/submissions/:id/decision', route(handleSubmissionDecision))
    .post('/api/evidence/:id/status', route(handleEvidenceStatus))
    .get('/api/knowledge', route(handleKnowledgeList))
    .post('/api/knowledge/:id/promote-watchlist', route(handleKnowledgePromote))
    .post('/api/knowledge/:id/exclude-watchlist', route(handleKnowledgeExclude))
    .get('/api/providers', route(handleProvidersList))
    .get('/api/providers/health', route(handleProvidersHealth))
    .post('/api/providers/emergency-disable', route(handleEmergencyDisable))
    .get('/api/audit-events', route(handleAuditEvents))
    .post('/api/retention/run', route(handleRetentionRun))
    .get('/media/*', route(handleMedia))
    .all('/api/*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    })
    .get('*', route(handleConsole))
    .all('*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    });
  return router;
}
