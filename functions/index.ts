import { backupStartRoute, backupsListRoute } from './admin-backup.js';
import { accountCreateRoute, accountRevokeSessionsRoute, accountsListRoute, accountUpdateRoute } from './accounts.js';
import { alertsRoute } from './alerts.js';
import { auditEventsRoute } from './audit-events.js';
import { loginRoute } from './auth-login.js';
import { logoutRoute } from './auth-logout.js';
import { sessionRoute } from './auth-session.js';
import { setupRoute } from './auth-setup.js';
import { bootstrapRoute } from './bootstrap.js';
import { captureFileRoute, evidenceCaptureRoute } from './evidence-capture.js';
import { evidenceStatusRoute } from './evidence-status.js';
import { decisionsExportRoute, queueExportRoute, watchlistExportRoute } from './exports.js';
import { healthRoute } from './health.js';
import { jobsProgressRoute } from './jobs-progress.js';
import { jobsRoute } from './jobs.js';
import { knowledgeExcludeRoute } from './knowledge-exclude.js';
import { knowledgeListRoute } from './knowledge-list.js';
import { knowledgePromoteRoute } from './knowledge-promote.js';
import { mediaRoute } from './media.js';
import { openApiRoute } from './openapi.js';
import { emergencyDisableRoute } from './providers-emergency-disable.js';
import { providersHealthRoute } from './providers-health.js';
import { providersListRoute } from './providers-list.js';
import { providerUpdateRoute } from './providers-update.js';
import { retentionRunRoute } from './retention-run.js';
import { reviewQueueRoute } from './review-queue.js';
import type { RouteSpec } from './route.js';
import { manualSearchRoute } from './search-manual.js';
import { submissionBundleRoute } from './submission-bundle.js';
import { submissionDecisionRoute } from './submission-decision.js';
import { submissionReviewRoute } from './submission-review.js';
import { reloadRoute } from './submissions-reload.js';
import { reloadReportRoute } from './reload-report.js';
import { reloadProgressRoute } from './reload-progress.js';
import { rerunRoute } from './submissions-rerun.js';
import { tokenCreateRoute, tokenRevokeRoute, tokensListRoute } from './tokens.js';

/**
 * The route list: every route of the API, registered explicitly. Each route's method, path, role,
 * request and answer schemas and handler are declared together in its own file; the router
 * (functions/router.ts) serves this list in this order and the OpenAPI document describes it.
 */
export const ROUTES: readonly RouteSpec[] = [
  healthRoute,
  sessionRoute,
  loginRoute,
  setupRoute,
  logoutRoute,
  accountsListRoute,
  accountCreateRoute,
  accountUpdateRoute,
  accountRevokeSessionsRoute,
  tokensListRoute,
  tokenCreateRoute,
  tokenRevokeRoute,
  providerUpdateRoute,
  emergencyDisableRoute,
  retentionRunRoute,
  backupStartRoute,
  backupsListRoute,
  alertsRoute,
  reloadRoute,
  reloadReportRoute,
  reloadProgressRoute,
  rerunRoute,
  manualSearchRoute,
  jobsRoute,
  jobsProgressRoute,
  bootstrapRoute,
  reviewQueueRoute,
  submissionReviewRoute,
  submissionDecisionRoute,
  evidenceStatusRoute,
  knowledgeListRoute,
  knowledgePromoteRoute,
  knowledgeExcludeRoute,
  providersListRoute,
  providersHealthRoute,
  auditEventsRoute,
  openApiRoute(() => ROUTES),
  mediaRoute,
  queueExportRoute,
  decisionsExportRoute,
  watchlistExportRoute,
  evidenceCaptureRoute,
  captureFileRoute,
  submissionBundleRoute,
];
