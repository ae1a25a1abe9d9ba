/**
 * The similarity index of submissions in the database (fingerprint_slots, migration 0014) against
 * the in-memory RobustIndex it replaced, side by side on the same fingerprints, at 10,000 and
 * 100,000 analysed submissions (BENCH_SIMILARITY_SIZES=10000,100000 to choose).
 *
 * Every stored submission has random fingerprints (a pHash and seven region hashes, the size real
 * ones have). For each of 200 queries two submissions are planted: a copy (the query's region
 * hashes, its pHash 0-6 bits off) that must match, and one whose pHash is 7-12 bits off with other
 * regions, which must come back as near the threshold (the pairs the geometric check looks at).
 * A comparison's lookups are timed as analysis runs them (the 0.9 threshold, near from 0.8),
 * on a real SQLite file. better-sqlite3 answers synchronously, so the longest event-loop stall
 * during the lookups (perf_hooks) and the longest backfill page are the figures to watch.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { buildConfig } from '../lib/config.js';
import { createEnv } from '../lib/env.js';
import { createLogger } from '../lib/log.js';
import { REGION_NAMES, RobustIndex, SlotQuery, type Fingerprints } from '../lib/images/robust.js';
import { backfillFingerprintSlots, submissionsFound } from '../lib/repo/fingerprint-slots.js';
import { upsertSubmissionStatement } from '../lib/repo/submissions.js';
import { storedFingerprints } from '../lib/matching/analysis.js';
import { seededRandom } from '../test/helpers/random.js';
import type { BenchTable } from './run.js';

export const name = 'similarity-store';

const SIZES = (process.env.BENCH_SIMILARITY_SIZES ?? '10000,100000').split(',').map(Number);
const QUERIES = 200;
const THRESHOLD = 0.9;
const NEAR_FROM = 0.8;
const PAGE = 2000;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapMiB = () => {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return (heapUsed + arrayBuffers) / 2 ** 20;
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

function generator(seed: number) {
  const random = seededRandom(seed);
  const hex = (digits: number) => Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');
  const flip = (phash: string, bits: number) => {
    let value = BigInt(`0x${phash}`);
    const flipped = new Set<number>();
    while (flipped.size < bits) flipped.add(Math.floor(random() * 64));
    for (const bit of flipped) value ^= 1n << BigInt(bit);
    return value.toString(16).padStart(16, '0');
  };
  const fingerprints = (): Fingerprints => ({
    phash: hex(16),
    variants: Object.fromEntries(REGION_NAMES.filter((n) => n !== 'trimmed').map((n) => [n, hex(64)])),
  });
  return { random, flip, fingerprints };
}

interface Planted {
  query: Fingerprints;
  copy: string;
  near: string;
}

async function measure(size: number): Promise<(string | number)[][]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-similarity-'));
  const { config } = buildConfig({ SVC_DATA_DIR: dataDir });
  const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
  const { random, flip, fingerprints } = generator(size);
  const planted: Planted[] = [];
  try {
    const now = new Date().toISOString();
    const entries = function* (): Generator<[string, Fingerprints]> {
      for (let q = 0; q < QUERIES; q++) {
        const query = fingerprints();
        const near = fingerprints();
        near.phash = flip(query.phash, 7 + Math.floor(random() * 6));
        planted.push({ query, copy: `copy${q}`, near: `near${q}` });
        yield [`copy${q}`, { phash: flip(query.phash, Math.floor(random() * 7)), variants: query.variants }];
        yield [`near${q}`, near];
      }
      for (let i = 2 * QUERIES; i < size; i++) yield [`s${String(i).padStart(6, '0')}`, fingerprints()];
    };
    let page: [string, Fingerprints][] = [];
    const flush = async () => {
      const statements = [
        upsertSubmissionStatement(
          env.db,
          page.map(([id]) => ({
            id,
            title: id,
            file: `images/${id}.jpg`,
            origin: 'quick',
            submitted_at: '2026-11-23 09:00',
            submitted_at_epoch: 0,
            width: 1600,
            height: 1200,
            format: 'jpeg',
            bytes: 400_000,
            sha256: id.padEnd(64, '0'),
          })),
          now,
        ),
        env.db
          .prepare(
            `UPDATE submissions SET analysis_status = 'done', phash = json_extract(f.value, '$.phash'), fingerprints = f.value
             FROM json_each(?) f WHERE submissions.id = f.key`,
          )
          .bind(JSON.stringify(Object.fromEntries(page))),
      ];
      await env.db.batch(statements);
      page = [];
    };
    for (const entry of entries()) {
      page.push(entry);
      if (page.length === PAGE) await flush();
    }
    if (page.length) await flush();
    await env.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').run();
    const before = statSync(path.join(dataDir, 'svc.sqlite3')).size;

    // The upgrade's backfill writes every slot (and is how this bench stores them).
    await env.db.prepare("INSERT INTO fingerprint_slots_backfill (after) VALUES ('')").run();
    const heapBeforeBackfill = heapMiB();
    const stalls = monitorEventLoopDelay({ resolution: 5 });
    let started = performance.now();
    // One page per call, to time each page (the job runs 100 per run, yielding between them).
    let longestPage = 0;
    for (let done = false; !done; ) {
      const at = performance.now();
      done = await backfillFingerprintSlots(env.db, (row) => storedFingerprints(row.phash, row.fingerprints), { pages: 1 });
      longestPage = Math.max(longestPage, performance.now() - at);
    }
    const backfillSeconds = (performance.now() - started) / 1000;
    const slotRows = (await env.db.prepare('SELECT COUNT(*) AS n FROM fingerprint_slots').first<{ n: number }>())!.n;
    await env.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').run();
    const growth = (statSync(path.join(dataDir, 'svc.sqlite3')).size - before) / 2 ** 20;

    const database: number[] = [];
    let nearCandidates = 0;
    let missed = 0;
    stalls.enable();
    for (const { query, copy, near } of planted) {
      started = performance.now();
      const slotQuery = new SlotQuery(query, THRESHOLD);
      const rows = await submissionsFound(env.db, [slotQuery.matchProbe()], 'none');
      const matches = slotQuery.matches(rows.map((r) => ({ key: r.id, fingerprints: storedFingerprints(r.phash, r.fingerprints) })));
      const nearRows = await submissionsFound(env.db, [slotQuery.nearProbe(NEAR_FROM)], 'none');
      nearCandidates += nearRows.length;
      const nearFound = slotQuery.near(
        nearRows.map((r) => ({ key: r.id, fingerprints: storedFingerprints(r.phash, r.fingerprints) })),
        NEAR_FROM,
      );
      database.push(performance.now() - started);
      if (!matches.some((m) => m.key === copy) || !nearFound.some((n) => n.key === near)) missed++;
    }
    stalls.disable();
    const lookupStall = stalls.max / 1e6;
    const heapDatabase = heapMiB() - heapBeforeBackfill;

    const heapBeforeIndex = heapMiB();
    started = performance.now();
    const index = new RobustIndex<string>();
    const stored = await env.db.prepare('SELECT id, phash, fingerprints FROM submissions').all<{ id: string; phash: string; fingerprints: string }>();
    for (const row of stored.results) index.add(row.id, storedFingerprints(row.phash, row.fingerprints));
    const buildSeconds = (performance.now() - started) / 1000;
    const heapIndex = heapMiB() - heapBeforeIndex;
    const memory: number[] = [];
    for (const { query, copy } of planted) {
      started = performance.now();
      const found = index.query(query, THRESHOLD);
      memory.push(performance.now() - started);
      if (!found.some((m) => m.key === copy)) missed++;
    }
    if (missed > 0) throw new Error(`similarity-store: ${missed} planted submissions not found at ${size}`);
    for (const list of [database, memory]) list.sort((a, b) => a - b);
    const label = size.toLocaleString('en-US');
    return [
      [
        label,
        'database (fingerprint_slots)',
        percentile(database, 50).toFixed(2),
        percentile(database, 99).toFixed(2),
        lookupStall.toFixed(0),
        (nearCandidates / QUERIES).toFixed(0),
        `${backfillSeconds.toFixed(1)} s backfill, longest page ${longestPage.toFixed(0)} ms`,
        `${slotRows.toLocaleString('en-US')} rows, +${growth.toFixed(0)} MiB file; heap +${Math.max(0, heapDatabase).toFixed(0)} MiB`,
      ],
      [
        label,
        'in memory (RobustIndex, before)',
        percentile(memory, 50).toFixed(2),
        percentile(memory, 99).toFixed(2),
        '-',
        '-',
        `${buildSeconds.toFixed(1)} s build`,
        `heap +${heapIndex.toFixed(0)} MiB per process`,
      ],
    ];
  } finally {
    await env.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchTable[]> {
  const rows: (string | number)[][] = [];
  for (const size of SIZES) rows.push(...(await measure(size)));
  return [
    {
      title: 'Similarity index of submissions: in the database against in memory',
      columns: [
        'analysed submissions',
        'index',
        'lookup p50 ms',
        'lookup p99 ms',
        'longest event-loop stall ms',
        'near candidates read',
        'to fill',
        'memory / storage',
      ],
      rows,
      notes: [
        `${QUERIES} comparisons per size, each with a planted copy (must match) and a planted pHash 7-12 bits off (must be near); all were found.`,
        'Database lookup = the match lookup and the near-threshold lookup of one comparison (two statements) plus the pairwise checks, on the SQLite file; the in-memory row is its query alone (it had the near lookup inside the same structure).',
        'Random fingerprints: real photographs cluster more, which makes buckets and candidate lists longer in both.',
      ],
    },
  ];
}
