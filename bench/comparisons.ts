/**
 * Comparison throughput with one process and with two (issue 31: one lease in the database once let
 * one comparison run at a time across the deployment, so a second process added nothing).
 *
 * The order-free matching set (test/helpers/matching-set.ts: photographs, a flip, a watermark, a
 * crop...) and each picture again re-encoded at three qualities and shrunk by a tenth, analysed
 * once into a data folder; the folder is copied, and in each copy the comparisons run in child
 * processes on the same SQLite file (test/helpers/compare-process.ts): all in one process, or
 * in two running at once, each taking the next comparison when it is free (as consumers claim
 * jobs; a fixed half each left one process idle while the other still had its slower half).
 * Throughput is comparisons per second of wall time; both runs must leave the same pair verdicts.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { buildConfig } from '../lib/config.js';
import { createEnv } from '../lib/env.js';
import { createLogger } from '../lib/log.js';
import { analyseSubmission } from '../lib/matching/analysis.js';
import { listSubmissionRows } from '../lib/repo/submissions.js';
import { openSqlite } from '../lib/db/sqlite.js';
import { dataPaths } from '../lib/paths.js';
import { TEST_ADMIN_TOKEN } from '../test/helpers/env.js';
import { FIXTURE_NAMES, reencoded } from '../test/helpers/fixtures.js';
import { matchingSet } from '../test/helpers/matching-set.js';
import { reload } from '../lib/ingest/reload.js';
import type { BenchTable } from './run.js';
import { cpuSeconds } from './proc.js';

export const name = 'comparisons';

/**
 * `edits` (the default): the matching set and re-encodings of it, mostly geometric checks (flips,
 * turns, watermarks matched by the region hashes alone or in the near band); `copies`
 * (BENCH_COMPARISONS_CORPUS=copies): 13 re-encodings of each fixture photo, matched by the pHash
 * alone, so no geometric check: the lookups, verdicts and evidence of a comparison by themselves.
 */
const CORPUS = process.env.BENCH_COMPARISONS_CORPUS ?? 'edits';

/**
 * `BENCH_COMPARISONS_PINNED=1` gives each process a core of its own (`taskset`; the process's
 * worker pools size themselves to it), as consumers on separate machines have: unpinned, one
 * process's geometric check already keeps part of the second core busy (both sides' keypoints at
 * once on its two workers), so the x-one-process column says what the machine has left, not how
 * comparisons scale with consumers.
 */
const PINNED = process.env.BENCH_COMPARISONS_PINNED === '1';

async function corpus(): Promise<Record<string, Buffer>> {
  if (CORPUS === 'copies') {
    const copies: Record<string, Buffer> = {};
    for (const fixture of FIXTURE_NAMES) {
      for (let quality = 35; quality <= 95; quality += 5) copies[`${fixture.replace(/\.\w+$/, '')}-q${quality}`] = await reencoded(fixture, quality);
    }
    return copies;
  }
  if (CORPUS !== 'edits') throw new Error(`BENCH_COMPARISONS_CORPUS is edits or copies, not ${CORPUS}`);
  const set = await matchingSet();
  const pictures: Record<string, Buffer> = {};
  for (const [content, bytes] of Object.entries(set)) {
    pictures[content] = bytes;
    for (const quality of [85, 70, 50]) pictures[`${content}-q${quality}`] = await sharp(bytes).jpeg({ quality }).toBuffer();
    const { width } = await sharp(bytes).metadata();
    pictures[`${content}-small`] = await sharp(bytes)
      .resize(Math.round(width! * 0.9))
      .jpeg({ quality: 85 })
      .toBuffer();
  }
  return pictures;
}

/** A data folder with every picture analysed and none compared; the ids. */
async function analysedFolder(pictures: Record<string, Buffer>): Promise<{ dataDir: string; ids: string[] }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-comparisons-'));
  const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
  const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
  for (const [content, bytes] of Object.entries(pictures)) await env.blobs.put(`submissions/images/${content}.jpg`, bytes);
  await reload(env);
  const rows = await listSubmissionRows(env.db);
  for (const row of rows) await analyseSubmission(env, row);
  const ids = rows.map((r) => r.id);
  await env.close();
  return { dataDir, ids };
}

interface ComparisonProcess {
  /** Resolves when the process has done the comparison. */
  compare(id: string): Promise<void>;
  /** CPU seconds the process has used so far, every thread. */
  cpu(): number;
  /** Resolves when it has exited. */
  end(): Promise<void>;
}

/** A started process, ready for comparisons, on `core` alone when one is given. */
async function startProcess(dataDir: string, core: number | null): Promise<ComparisonProcess> {
  const command = [process.execPath, '--import', 'tsx', 'test/helpers/compare-process.ts', dataDir];
  const [file, ...args] = core === null ? command : ['taskset', '-c', String(core), ...command];
  const child = spawn(file, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, COMPARE_FROM_STDIN: '1' },
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`comparison process exited with ${code}`))));
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await Promise.race([lines.next(), exited.then(() => ({ done: true as const, value: undefined }))]);
    if (line.done) throw new Error('comparison process stopped');
  };
  await next();
  return {
    async compare(id) {
      child.stdin.write(`${id}\n`);
      await next();
    },
    cpu: () => cpuSeconds([child.pid!]),
    end: () => {
      child.stdin.end();
      return exited;
    },
  };
}

function pairVerdicts(dataDir: string): string {
  const db = openSqlite(dataPaths(dataDir).database, { readonly: true });
  try {
    return JSON.stringify(db.prepare('SELECT a, b, matched, a_view, b_view FROM submission_pairs ORDER BY a, b').all());
  } finally {
    db.close();
  }
}

export async function run(): Promise<BenchTable[]> {
  const { dataDir, ids } = await analysedFolder(await corpus());
  const rows: (string | number)[][] = [];
  const verdicts: string[] = [];
  let single = 0;
  try {
    for (const processes of [1, 2]) {
      const copy = mkdtempSync(path.join(tmpdir(), 'bench-comparisons-run-'));
      cpSync(dataDir, copy, { recursive: true });
      // Timed from when every process has started (tsx, the database, the images port) and warmed
      // up (test/helpers/compare-process.ts) to the last comparison; each takes the next one when
      // free, as consumers claim jobs.
      const ready = await Promise.all(Array.from({ length: processes }, (_, i) => startProcess(copy, PINNED ? i : null)));
      const cpuBefore = ready.reduce((sum, child) => sum + child.cpu(), 0);
      const started = performance.now();
      const queue = [...ids];
      await Promise.all(
        ready.map(async (child) => {
          for (let id = queue.shift(); id !== undefined; id = queue.shift()) await child.compare(id);
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const cpu = ready.reduce((sum, child) => sum + child.cpu(), 0) - cpuBefore;
      await Promise.all(ready.map((child) => child.end()));
      verdicts.push(pairVerdicts(copy));
      rmSync(copy, { recursive: true, force: true });
      const rate = ids.length / seconds;
      if (processes === 1) single = rate;
      rows.push([processes, ids.length, seconds.toFixed(1), rate.toFixed(2), (rate / single).toFixed(2), cpu.toFixed(1), (cpu / seconds).toFixed(2)]);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [
    {
      title: `Comparison throughput by processes (${CORPUS}${PINNED ? ', a core each' : ''})`,
      columns: ['processes', 'comparisons', 'wall s', 'comparisons/s', 'x one process', 'CPU s', 'cores busy'],
      rows,
      notes: [
        `${ids.length} analysed pictures (${CORPUS === 'copies' ? '13 re-encodings of each fixture photo' : 'the order-free matching set, each also re-encoded at 85, 70, 50 and shrunk by a tenth'}), compared in child processes on one SQLite file, timed from when all have started and warmed up (geometric checks of pictures outside the set); each process takes the next comparison when free and has its own images port (keypoints shared through the data folder where the build keeps them there).`,
        `Same pair verdicts with 1 and 2 processes: ${verdicts[0] === verdicts[1] ? 'yes' : 'NO'}.`,
        'Target (issue 31): 2 processes at least 1.7x one, on a quiet 2-core machine.',
      ],
    },
  ];
}
