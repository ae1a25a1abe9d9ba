import { defineConfig } from 'vitest/config';

/**
 * The handler tests again on the Worker's storage: D1 and R2 under miniflare instead of the SQLite
 * file and the data folder (test/helpers/env.ts, test/helpers/d1-r2.ts). Files that put media into
 * the data folder themselves cannot run here (see the list's comments).
 */
export default defineConfig({
  test: {
    include: [
      'test/review/review-detail.test.ts',
      'test/review/decision.test.ts',
      'test/review/evidence-status.test.ts',
      'test/review/knowledge.test.ts',
      'test/review/queue-bootstrap.test.ts',
      'test/review/exports.test.ts',
      'test/auth/auth.test.ts',
    ],
    env: { SVC_TEST_ADAPTERS: 'd1-r2' },
    setupFiles: ['test/helpers/d1-r2-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
