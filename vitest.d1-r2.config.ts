import { defineConfig } from 'vitest/config';

/**
 * Handler tests again on the Worker's storage: D1 and R2 under miniflare instead of the SQLite file
 * and the data folder (test/helpers/env.ts, test/helpers/d1-r2.ts). `npm test` runs this after the
 * main run; one file: `npx vitest run --config vitest.d1-r2.config.ts test/review/decision.test.ts`.
 *
 * Reload, the job loops, media serving and retention run here through test/ingest/storage-ports, and
 * the similarity index kept in the database through test/ingest/similarity-store, comparisons side
 * by side and in any order through test/ingest/order-free-matching, small turns, flips and flat
 * pictures' crops and pads through test/matching/internal-copies, the pages of copies (links,
 * captures, bundle) through test/enrichment/pages-of-copies, and the round trips an analysis and
 * an enrichment make to D1 through test/worker/round-trips.
 * Not here: files that write media into the data folder or read it there themselves (test/ingest,
 * test/enrichment, bundle, later-submissions, retention, foundation/http), providers (its restart
 * reopens the data folder's SQLite file), queue-scale (a scale check: 24 s on D1 for what
 * queue-bootstrap already covers), and the files that test miniflare or the Worker directly.
 */
export default defineConfig({
  test: {
    include: [
      'test/review/review-detail.test.ts',
      'test/review/decision.test.ts',
      'test/review/evidence-status.test.ts',
      'test/review/knowledge.test.ts',
      'test/review/audit-events.test.ts',
      'test/review/queue-bootstrap.test.ts',
      'test/review/exports.test.ts',
      'test/review/openapi.test.ts',
      'test/auth/auth.test.ts',
      'test/auth/alerts.test.ts',
      'test/auth/rate-limits.test.ts',
      'test/foundation/risk.test.ts',
      'test/foundation/test-env.test.ts',
      'test/foundation/storage-full.test.ts',
      'test/worker/jobs-queue.test.ts',
      'test/worker/round-trips.test.ts',
      'test/ingest/storage-ports.test.ts',
      'test/ingest/reload-report.test.ts',
      'test/ingest/similarity-store.test.ts',
      'test/ingest/order-free-matching.test.ts',
      'test/matching/internal-copies.test.ts',
      'test/enrichment/pages-of-copies.test.ts',
    ],
    env: { SVC_TEST_ADAPTERS: 'd1-r2' },
    setupFiles: ['test/helpers/d1-r2-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The files share one worker's modules: miniflare loads once, not per file (86 s against 165 s
    // for this list on the shared machine). Each file still starts and stops its own miniflare, and
    // each env has its own database and bucket; the main run keeps every file isolated.
    isolate: false,
  },
});
