import { buildConfig } from '../../lib/config.js';
import { createEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { compareSubmission } from '../../lib/matching/analysis.js';
import { TEST_ADMIN_TOKEN } from './env.js';

/**
 * One of several processes comparing submissions on the same data folder at once
 * (test/ingest/parallel-comparisons.test.ts): `tsx test/helpers/compare-process.ts <data folder> <id>...`
 * compares each in turn and exits; the database is already migrated by the test. With
 * COMPARE_ON_SIGNAL=1 it starts, prints `ready` and compares once a line comes on its stdin.
 */
const [dataDir, ...ids] = process.argv.slice(2);
const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
// A benchmark times the comparisons only (bench/comparisons.ts): started, the process says so and waits for a line.
if (process.env.COMPARE_ON_SIGNAL === '1') {
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
}
try {
  for (const id of ids) await compareSubmission(env, id);
} finally {
  await env.close();
}
