import { createInterface } from 'node:readline';
import { buildConfig } from '../../lib/config.js';
import { createEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { compareSubmission } from '../../lib/matching/analysis.js';
import { sourceOf } from '../../lib/images/source.js';
import { TEST_ADMIN_TOKEN } from './env.js';
import { FIXTURE_NAMES, reencoded } from './fixtures.js';

/**
 * One of several processes comparing submissions on the same data folder at once
 * (test/ingest/parallel-comparisons.test.ts): `tsx test/helpers/compare-process.ts <data folder> <id>...`
 * compares each in turn and exits; the database is already migrated by the test. With
 * COMPARE_FROM_STDIN=1 and no ids it starts, prints `ready`, then compares each id that comes on
 * its stdin, a line each, printing `done` after each (a benchmark hands the next comparison to
 * whichever process is free, as consumers claim jobs: bench/comparisons.ts), until stdin ends.
 * Before `ready` it warms up as a consumer that has run a while is: geometric checks of pictures no
 * comparison asks for (fixtures at a quality the benchmark's set does not use) start its worker
 * threads and compile their code, a start that cost each process 1-2 s of CPU in its first checks.
 */
const [dataDir, ...ids] = process.argv.slice(2);
const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
try {
  if (process.env.COMPARE_FROM_STDIN === '1') {
    const [a, b, c] = await Promise.all(FIXTURE_NAMES.slice(0, 3).map((name) => reencoded(name, 61)));
    await Promise.all([
      env.images.matchGeometry(sourceOf(a), sourceOf(b)),
      env.images.matchGeometry(sourceOf(c), sourceOf(a)),
      env.images.matchGeometry(sourceOf(b), sourceOf(c)),
    ]);
    process.stdout.write('ready\n');
    for await (const id of createInterface({ input: process.stdin })) {
      await compareSubmission(env, id);
      process.stdout.write('done\n');
    }
  } else for (const id of ids) await compareSubmission(env, id);
} finally {
  await env.close();
}
