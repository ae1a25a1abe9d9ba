import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createEnv, type OwnedEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { dataPaths } from '../../lib/paths.js';
import { analyseSubmission, compareSubmission } from '../../lib/matching/analysis.js';
import { getSubmissionRow } from '../../lib/repo/submissions.js';
import { createTestEnv, TEST_ADMIN_TOKEN, type TestEnv } from '../helpers/env.js';
import { internalLinks, matchingSet, pairVerdicts, shuffledNames, storedRisks } from '../helpers/matching-set.js';

/**
 * Issue 31: comparisons no longer queue behind one lease across the deployment. Three processes
 * compare one set of analysed submissions at once on the same SQLite file; every pair's final
 * verdict, every internal match and every submission's risk (each process touching the risk of the
 * others' partners) must be what one process comparing them in turn leaves.
 * (On D1, three envs on one database stand for three isolates: test/ingest/order-free-matching.)
 */
let env: TestEnv | undefined;
let serial: OwnedEnv | undefined;
const folders: string[] = [];
afterEach(async () => {
  await env?.dispose();
  await serial?.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function compareInProcess(dataDir: string, ids: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/compare-process.ts', dataDir, ...ids], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk) => {
      errors += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`comparison process exited with ${code}: ${errors}`))));
  });
}

it('comparisons in three processes at once leave every pair and every risk as one process comparing in turn does', { timeout: 600_000 }, async () => {
  env = await createTestEnv();
  const set = await matchingSet();
  const names = shuffledNames(Object.keys(set), 7);
  const ids = [...names.keys()];
  for (const [id, content] of names) await env.blobs.put(`submissions/images/${id}.jpg`, set[content]);
  expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ rejected: [] });
  for (const id of ids)
    expect(await analyseSubmission(env, (await getSubmissionRow(env.db, id))!)).toMatchObject({ stored: { id, analysis_status: 'done' }, failure: null });
  // The same analysed set in a second folder, compared there by one process, one at a time.
  const copy = mkdtempSync(join(tmpdir(), 'svc-serial-'));
  folders.push(copy);
  // The files as they are; the database through SQLite, which copies one consistent state of it.
  const database = dataPaths(copy).database;
  cpSync(env.dataDir, copy, { recursive: true, filter: (source) => !basename(source).startsWith(basename(database)) });
  await env.db.prepare('VACUUM INTO ?').bind(database).run();
  const { config } = buildConfig({ SVC_DATA_DIR: copy, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
  serial = await createEnv(config, { log: createLogger(config, { silent: true }) });
  for (const id of ids) await compareSubmission(serial, id);

  // Three processes, each its share in its own order, all at once.
  const shares = [0, 1, 2].map((n) => ids.filter((_, i) => i % 3 === n));
  await Promise.all([shares[0], shares[1].reverse(), shares[2]].map((share) => compareInProcess(env!.dataDir, share)));

  const expected = await pairVerdicts(serial.db);
  expect(expected.some((row) => (row as { matched: number }).matched === 1)).toBe(true);
  expect(await pairVerdicts(env.db)).toEqual(expected);
  const contentOf = (id: string) => names.get(id)!;
  expect(await internalLinks(env.db, contentOf)).toEqual(await internalLinks(serial.db, contentOf));
  const risks = await storedRisks(serial.db, contentOf);
  expect(risks.some((risk) => risk.includes('internal_match['))).toBe(true);
  expect(await storedRisks(env.db, contentOf)).toEqual(risks);
});
