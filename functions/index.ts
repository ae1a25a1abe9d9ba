import type { DescribedRoute } from '../lib/api/openapi.js';
import type { Access } from '../lib/auth/authenticate.js';
import type { Env } from '../lib/ports.js';
import { AccountChangeBody, NewAccountBody, handleAccountCreate, handleAccountRevokeSessions, handleAccountsList, handleAccountUpdate } from './accounts.js';
import { handleAlerts } from './alerts.js';
import { AuditEventsQuery, handleAuditEvents } from './audit-events.js';
import { handleLogin, LoginBody, SetupBody } from './auth-login.js';
import { handleLogout } from './auth-logout.js';
import { handleSession } from './auth-session.js';
import { handleSetup } from './auth-setup.js';
import { handleBootstrap } from './bootstrap.js';
import { handleConsole } from './console.js';
import { handleCaptureFile, handleEvidenceCapture } from './evidence-capture.js';
import { EvidenceStatusBody, handleEvidenceStatus } from './evidence-status.js';
import { DecisionsExportQuery, handleDecisionsExport, handleQueueExport, handleWatchlistExport, QueueExportQuery, WatchlistExportQuery } from './exports.js';
import { handleHealth } from './health.js';
import { handleJobsProgress } from './jobs-progress.js';
import { handleJobs, JobsQuery } from './jobs.js';
import { handleKnowledgeExclude } from './knowledge-exclude.js';
import { handleKnowledgeList, KnowledgeQuery } from './knowledge-list.js';
import { handleKnowledgePromote } from './knowledge-promote.js';
import { handleMedia } from './media.js';
import { openApiHandler } from './openapi.js';
import { handleEmergencyDisable } from './providers-emergency-disable.js';
import { handleProvidersHealth } from './providers-health.js';
import { handleProvidersList } from './providers-list.js';
import { handleProviderUpdate, ProviderUpdateBody } from './providers-update.js';
import { handleRetentionRun } from './retention-run.js';
import { handleReviewQueue, ReviewQueueQuery } from './review-queue.js';
import { handleManualSearch, ManualSearchBody } from './search-manual.js';
import { handleSubmissionBundle } from './submission-bundle.js';
import { DecisionBody, handleSubmissionDecision } from './submission-decision.js';
import { handleSubmissionReview } from './submission-review.js';
import { handleSubmissionsReload } from './submissions-reload.js';
import { handleSubmissionRerun, RerunBody } from './submissions-rerun.js';
import { handleTokenCreate, handleTokenRevoke, handleTokensList, NewTokenBody } from './tokens.js';

export type RouteRequest = Request & { params: Record<string, string> };
export type Handler = (request: RouteRequest, env: Env, ctx?: unknown) => Promise<Response>;

type Method = 'get' | 'post' | 'patch';

/** A route: its handler, the role it needs and what it reads and answers (the OpenAPI document). */
export interface RouteSpec extends DescribedRoute {
  method: Method;
  /** Who may call it: checked by the router, before the handler, for every route alike. */
  access: Access;
  handler: Handler;
}

const EXPORT_FILE = {
  types: ['text/csv', 'application/x-ndjson'],
  description: 'UTF-8; CSV starts with a byte-order mark (format=csv, the default) or one JSON object per line (format=jsonl)',
};

/**
 * The route list: every route of the API, registered explicitly, with the role it needs and what it
 * reads and answers. The router (functions/router.ts) serves it, the OpenAPI document describes it.
 */
export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'get',
    path: '/health',
    access: 'public',
    handler: handleHealth,
    summary: 'Liveness and database check',
    answer: 'health',
    otherAnswers: { 503: 'health' },
  },
  {
    method: 'get',
    path: '/api/auth/session',
    access: 'public',
    handler: handleSession,
    summary: 'Who is signed in, and whether the first administrator is still to be created',
    answer: 'session',
  },
  {
    method: 'post',
    path: '/api/auth/login',
    access: 'public',
    handler: handleLogin,
    summary: 'Sign in: sets the session cookie',
    answer: 'signedIn',
    body: LoginBody,
  },
  {
    method: 'post',
    path: '/api/auth/setup',
    access: 'public',
    handler: handleSetup,
    summary: 'Create the first administrator (loopback only, once)',
    answer: 'signedIn',
    body: SetupBody,
  },
  { method: 'post', path: '/api/auth/logout', access: 'operator', handler: handleLogout, summary: 'Sign out: ends the session', answer: 'signedOut' },
  { method: 'get', path: '/api/accounts', access: 'admin', handler: handleAccountsList, summary: 'Accounts', answer: 'accounts' },
  {
    method: 'post',
    path: '/api/accounts',
    access: 'admin',
    handler: handleAccountCreate,
    summary: 'Create an account',
    answer: 'account',
    status: 201,
    body: NewAccountBody,
  },
  {
    method: 'patch',
    path: '/api/accounts/:id',
    access: 'admin',
    handler: handleAccountUpdate,
    summary: 'Change a role, a password or disable an account',
    answer: 'account',
    body: AccountChangeBody,
  },
  {
    method: 'post',
    path: '/api/accounts/:id/revoke-sessions',
    access: 'admin',
    handler: handleAccountRevokeSessions,
    summary: 'End every session of an account',
    answer: 'sessionsRevoked',
  },
  { method: 'get', path: '/api/tokens', access: 'admin', handler: handleTokensList, summary: 'Personal API tokens (never their secrets)', answer: 'tokens' },
  {
    method: 'post',
    path: '/api/tokens',
    access: 'admin',
    handler: handleTokenCreate,
    summary: 'Create a token: its secret is in this answer only',
    answer: 'newToken',
    status: 201,
    body: NewTokenBody,
  },
  { method: 'post', path: '/api/tokens/:id/revoke', access: 'admin', handler: handleTokenRevoke, summary: 'Revoke a token', answer: 'token' },
  {
    method: 'patch',
    path: '/api/providers/:id',
    access: 'admin',
    handler: handleProviderUpdate,
    summary: 'Switch a provider on or off',
    answer: 'provider',
    body: ProviderUpdateBody,
  },
  {
    method: 'post',
    path: '/api/providers/emergency-disable',
    access: 'admin',
    handler: handleEmergencyDisable,
    summary: 'Switch every provider off at once',
    answer: 'emergencyDisable',
  },
  {
    method: 'post',
    path: '/api/retention/run',
    access: 'admin',
    handler: handleRetentionRun,
    summary: 'Delete downloaded and derived images older than the retention period now',
    answer: 'retention',
  },
  { method: 'get', path: '/api/alerts', access: 'admin', handler: handleAlerts, summary: "Today's quota alerts and their webhook delivery", answer: 'alerts' },
  {
    method: 'post',
    path: '/api/submissions/reload',
    access: 'operator',
    handler: handleSubmissionsReload,
    summary: 'Index the submissions folder and queue the analyses it owes',
    answer: 'reload',
  },
  {
    method: 'post',
    path: '/api/submissions/:id/rerun-enrichment',
    access: 'operator',
    handler: handleSubmissionRerun,
    summary: 'Run enrichment again',
    answer: 'rerun',
    body: RerunBody,
  },
  {
    method: 'post',
    path: '/api/search/manual',
    access: 'operator',
    handler: handleManualSearch,
    summary: 'Search a provider by hand, optionally keeping the results as evidence',
    answer: 'manualSearch',
    body: ManualSearchBody,
  },
  { method: 'get', path: '/api/jobs', access: 'operator', handler: handleJobs, summary: 'Analysis and enrichment jobs', answer: 'jobs', query: JobsQuery },
  {
    method: 'get',
    path: '/api/jobs/progress',
    access: 'operator',
    handler: handleJobsProgress,
    summary: 'Work in flight per job type: counts, rate, time left, failures',
    answer: 'progress',
  },
  {
    method: 'get',
    path: '/api/bootstrap',
    access: 'operator',
    handler: handleBootstrap,
    summary: "Everything the console's first screen needs",
    answer: 'bootstrap',
  },
  {
    method: 'get',
    path: '/api/review-queue',
    access: 'operator',
    handler: handleReviewQueue,
    summary: 'The review queue: undecided first, then risk high to low',
    answer: 'queue',
    query: ReviewQueueQuery,
  },
  {
    method: 'get',
    path: '/api/submissions/:id/review',
    access: 'operator',
    handler: handleSubmissionReview,
    summary: 'A submission with its evidence by group and its watchlist entry',
    answer: 'review',
  },
  {
    method: 'post',
    path: '/api/submissions/:id/decision',
    access: 'operator',
    handler: handleSubmissionDecision,
    summary: 'Decide: 승인, 보류 or 반려',
    answer: 'decision',
    body: DecisionBody,
  },
  {
    method: 'post',
    path: '/api/evidence/:id/status',
    access: 'operator',
    handler: handleEvidenceStatus,
    summary: 'Mark evidence: 판단에 사용, 무관, 오탐 or 보류',
    answer: 'evidenceStatus',
    body: EvidenceStatusBody,
  },
  {
    method: 'get',
    path: '/api/knowledge',
    access: 'operator',
    handler: handleKnowledgeList,
    summary: 'Attention candidates and the watchlist',
    answer: 'knowledge',
    query: KnowledgeQuery,
  },
  {
    method: 'post',
    path: '/api/knowledge/:id/promote-watchlist',
    access: 'operator',
    handler: handleKnowledgePromote,
    summary: 'Promote an entry to the watchlist (확정 DB 편입)',
    answer: 'entry',
  },
  {
    method: 'post',
    path: '/api/knowledge/:id/exclude-watchlist',
    access: 'operator',
    handler: handleKnowledgeExclude,
    summary: 'Exclude an entry as a false match (오탐 제외)',
    answer: 'entry',
  },
  {
    method: 'get',
    path: '/api/providers',
    access: 'operator',
    handler: handleProvidersList,
    summary: 'Providers with their switches, settings and quota',
    answer: 'providers',
  },
  {
    method: 'get',
    path: '/api/providers/health',
    access: 'operator',
    handler: handleProvidersHealth,
    summary: 'Providers with their last success and failure',
    answer: 'providersHealth',
  },
  {
    method: 'get',
    path: '/api/audit-events',
    access: 'operator',
    handler: handleAuditEvents,
    summary: 'The audit log, newest first, with who acted',
    answer: 'auditEvents',
    query: AuditEventsQuery,
  },
  { method: 'get', path: '/api/openapi.json', access: 'public', handler: openApiHandler(() => ROUTES), summary: 'This document', answer: 'openapi' },
  {
    method: 'get',
    path: '/media/*',
    access: 'operator',
    handler: handleMedia,
    summary: 'A stored image: submission, thumbnail, derived copy or downloaded evidence',
    file: { types: ['application/octet-stream'], description: 'The stored file, with a restrictive Content-Security-Policy and nosniff' },
  },
  {
    method: 'get',
    path: '/api/exports/queue',
    access: 'operator',
    handler: handleQueueExport,
    summary: 'The filtered queue in its order as CSV or JSON Lines, streamed',
    query: QueueExportQuery,
    file: EXPORT_FILE,
  },
  {
    method: 'get',
    path: '/api/exports/decisions',
    access: 'operator',
    handler: handleDecisionsExport,
    summary: 'Every decision with its evidence counts, latest first, streamed',
    query: DecisionsExportQuery,
    file: EXPORT_FILE,
  },
  {
    method: 'get',
    path: '/api/exports/watchlist',
    access: 'operator',
    handler: handleWatchlistExport,
    summary: 'Attention candidates and the watchlist, streamed',
    query: WatchlistExportQuery,
    file: EXPORT_FILE,
  },
  {
    method: 'post',
    path: '/api/evidence/:id/capture',
    access: 'operator',
    handler: handleEvidenceCapture,
    summary: 'Fetch and keep the page of a web evidence item now (a failure is stored as failure evidence)',
    answer: 'pageCapture',
  },
  {
    method: 'get',
    path: '/api/captures/:id',
    access: 'operator',
    handler: handleCaptureFile,
    summary: 'A page capture as stored, as plain text (never rendered as a page)',
    file: { types: ['text/plain'], description: 'The page bytes as fetched, with the same Content-Security-Policy and nosniff as /media' },
  },
  {
    method: 'get',
    path: '/api/submissions/:id/bundle',
    access: 'operator',
    handler: handleSubmissionBundle,
    summary: 'The case as a ZIP: images, page captures, cited summary, audit events and manifest.json with SHA-256s',
    file: { types: ['application/zip'], description: 'A ZIP whose manifest.json lists every file with its SHA-256, source URL, fetch time and evidence' },
  },
];

/** The console's files, for every GET outside /api/ no route takes: the sign-in page too, so open to all; they hold no data. */
export const CONSOLE_ROUTE: RouteSpec = { method: 'get', path: '*', access: 'public', handler: handleConsole, summary: 'The console' };
