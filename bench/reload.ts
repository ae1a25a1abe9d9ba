/**
 * Reloads at 100,000 files (BENCH_RELOAD_FILES): the no-op reload, every file already imported with
 * its size, mtime and inode, so nothing is read or hashed; a reload after 1,000 files changed; the
 * first pass over files the database has never seen; and, in a folder of its own, reloads beside
 * the watcher after 20,000 refusals (BENCH_RELOAD_REFUSED), with nothing changed and with one file
 * changed. Each round times one reload with its longest event-loop stall, in
 * a process of its own after a warm-up reload (bench/reload-round.ts), for this build and for a
 * baseline build on the same data folder, in alternating rounds (the machine is shared, so only
 * figures from the same run compare). `BENCH_RELOAD_BASELINE=<commit>` picks the baseline; without
 * it only this build runs.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { buildConfig } from '../lib/config.js';
import { createEnv } from '../lib/env.js';
import { createLogger } from '../lib/log.js';
import { quickTitle } from '../lib/ingest/candidate.js';
import { keepRefusalsStatements, type Refusal } from '../lib/repo/ingest.js';
import { upsertSubmissionStatement } from '../lib/repo/submissions.js';
import { formatLocal } from '../lib/time.js';
import type { BenchTable } from './run.js';

export const name = 'reload';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILES = Number(process.env.BENCH_RELOAD_FILES ?? 100_000);
const ROUNDS = 5;
/** Files rewritten before each round of the changed-files reload, and its rounds. */
const CHANGED = 1000;
const CHANGED_ROUNDS = 3;
/** Files the service refuses (not images) in the refusals' folder, beside a few images. */
const REFUSED = Number(process.env.BENCH_RELOAD_REFUSED ?? 20_000);
const REFUSED_IMAGES = 10;

interface Build {
  label: string;
  dir: string;
  /** The reload runs beside the Node service's folder watcher (lib/ingest/folder-watch.ts). */
  journal?: boolean;
}

/** A checkout of the baseline commit beside this one, sharing node_modules. */
function baselineBuild(commit: string): Build {
  const dir = path.join(ROOT, 'outputs', 'bench', `build-${commit}`);
  if (!existsSync(path.join(dir, 'lib', 'env.ts')))
    execFileSync('git', ['worktree', 'add', '--force', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(path.join(dir, 'node_modules'))) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { label: `baseline ${commit}`, dir };
}

interface Round {
  seconds: number;
  stallMs: number;
  unchanged: number;
  imported: number;
  updated: number;
}

async function round(build: Build, dataDir: string, mode: string[]): Promise<Round> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'reload-round.ts'), build.dir, dataDir, ...mode],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Round;
}

/** A no-op round: every file unchanged. */
async function noopRound(build: Build, dataDir: string): Promise<Round> {
  const result = await round(build, dataDir, [build.journal ? 'journal' : 'full']);
  if (result.unchanged !== FILES)
    throw new Error(`the no-op reload of ${build.label} was not one: ${result.imported} imported, ${result.updated} updated, ${result.unchanged} unchanged`);
  return result;
}

/** A round that rewrites CHANGED files beside the watcher, then reloads. */
async function changedRound(build: Build, dataDir: string): Promise<Round> {
  const result = await round(build, dataDir, ['changed', String(CHANGED)]);
  if (result.updated !== CHANGED) throw new Error(`the reload of ${build.label} after ${CHANGED} changed files updated ${result.updated}`);
  return result;
}

/**
 * A round in the refusals' folder beside the watcher: after the warm-up pass, nothing changed
 * (`journal`) or its first image rewritten (`changed 1`).
 */
async function refusedRound(build: Build, dataDir: string, changed: boolean): Promise<Round> {
  const result = await round(build, dataDir, changed ? ['changed', '1'] : ['journal']);
  const expected = changed ? { updated: 1, unchanged: REFUSED_IMAGES - 1 } : { updated: 0, unchanged: REFUSED_IMAGES };
  if (result.updated !== expected.updated || result.unchanged !== expected.unchanged || result.imported !== 0)
    throw new Error(
      `the reload of ${build.label} after ${REFUSED} refusals: ${result.imported} imported, ${result.updated} updated, ${result.unchanged} unchanged`,
    );
  return result;
}

/** The first pass over the seeded images, into a database of its own that has never seen them. */
async function firstRound(build: Build, dataDir: string): Promise<Round> {
  const fresh = mkdtempSync(path.join(os.tmpdir(), 'bench-reload-first-'));
  try {
    mkdirSync(path.join(fresh, 'submissions'));
    symlinkSync(path.join(dataDir, 'submissions', 'images'), path.join(fresh, 'submissions', 'images'));
    const result = await round(build, fresh, ['first']);
    if (result.imported !== FILES) throw new Error(`the first pass of ${build.label} imported ${result.imported} of ${FILES}`);
    return result;
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/**
 * A data folder with `files` tiny images, each already recorded as an unchanged quick submission,
 * and `refused` text files (named after them) each already recorded as refused.
 */
async function seed(dataDir: string, files: number, refused = 0): Promise<void> {
  const { config } = buildConfig({ SVC_DATA_DIR: dataDir });
  const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
  try {
    const tiny = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer();
    const now = new Date().toISOString();
    for (let start = 0; start < files; start += 5000) {
      const statements = [];
      for (let i = start; i < Math.min(start + 5000, files); i++) {
        const name = `f${String(i).padStart(6, '0')}.jpg`;
        const file = path.join(env.paths.imagesDir, name);
        await writeFile(file, tiny);
        const info = await stat(file);
        const minute = new Date(Math.floor(info.mtimeMs / 60000) * 60000);
        statements.push(
          upsertSubmissionStatement(
            env.db,
            {
              id: `f${String(i).padStart(6, '0')}`,
              title: quickTitle(name),
              file: `images/${name}`,
              origin: 'quick',
              submitted_at: formatLocal(minute, config.SVC_TIMEZONE),
              submitted_at_epoch: minute.getTime() / 1000,
              width: 8,
              height: 8,
              format: 'jpeg',
              bytes: info.size,
              sha256: 'x',
              file_mtime_ms: Math.floor(info.mtimeMs),
              file_version: String(info.ino),
            },
            now,
          ),
        );
      }
      await env.db.batch(statements);
    }
    for (let start = 0; start < refused; start += 5000) {
      const refusals: Refusal[] = [];
      for (let i = start; i < Math.min(start + 5000, refused); i++) {
        const name = `r${String(i).padStart(6, '0')}.jpg`;
        const file = path.join(env.paths.imagesDir, name);
        await writeFile(file, `not a picture: ${i}`);
        const info = await stat(file);
        refusals.push({
          file: `images/${name}`,
          bytes: info.size,
          file_mtime_ms: Math.floor(info.mtimeMs),
          file_version: String(info.ino),
          reason: 'not an image',
        });
      }
      await env.db.batch(keepRefusalsStatements(env.db, refusals, []));
    }
    await env.db.prepare(`UPDATE submissions SET analysis_status = 'done', enrichment_status = 'skipped'`).run();
    // The seeding's write-ahead log is folded in now, not during the first timed reload.
    await env.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').run();
  } finally {
    await env.close();
  }
  // Nor the kernel's writing back of 100,000 new files.
  execFileSync('sync');
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function run(): Promise<BenchTable[]> {
  const baseline = process.env.BENCH_RELOAD_BASELINE;
  const builds: Build[] = [
    { label: 'this build, full pass (no watcher: the Worker, or the first reload after a start)', dir: ROOT },
    { label: 'this build, folder journal (the Node service)', dir: ROOT, journal: true },
  ];
  const before = baseline ? baselineBuild(baseline) : null;
  if (before) builds.push(before);
  // Changed files and the first pass compare this build with the baseline, each as the Node service runs it.
  const compared: Build[] = [{ label: 'this build', dir: ROOT }, ...(before ? [before] : [])];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-reload-'));
  const refusedDir = mkdtempSync(path.join(os.tmpdir(), 'bench-reload-refused-'));
  try {
    await seed(dataDir, FILES);
    await seed(refusedDir, REFUSED_IMAGES, REFUSED);
    // Beside the watcher, after the refusals: this build and the baseline, alternating.
    const refusedQuiet: Round[][] = compared.map(() => []);
    const refusedNamed: Round[][] = compared.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (let b = 0; b < compared.length; b++) refusedQuiet[b].push(await refusedRound(compared[b], refusedDir, false));
    }
    for (let r = 0; r < CHANGED_ROUNDS; r++) {
      for (let b = 0; b < compared.length; b++) refusedNamed[b].push(await refusedRound(compared[b], refusedDir, true));
    }
    const rounds: Round[][] = builds.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (let b = 0; b < builds.length; b++) rounds[b].push(await noopRound(builds[b], dataDir));
    }
    const changed: Round[][] = compared.map(() => []);
    for (let r = 0; r < CHANGED_ROUNDS; r++) {
      for (let b = 0; b < compared.length; b++) changed[b].push(await changedRound(compared[b], dataDir));
    }
    const first: Round[] = [];
    for (const build of compared) first.push(await firstRound(build, dataDir));
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ');
    const machine = `load average at the end ${load} (${os.availableParallelism()} cores)`;
    return [
      {
        title: `No-op reload at ${FILES.toLocaleString('en')} files`,
        columns: ['build', 'reload (s, median)', 'rounds (s)', 'longest event-loop stall (ms, median of rounds)', 'longest stall of all rounds (ms)'],
        rows: builds.map((build, b) => [
          build.label,
          median(rounds[b].map((x) => x.seconds)).toFixed(3),
          rounds[b].map((x) => x.seconds.toFixed(3)).join(', '),
          median(rounds[b].map((x) => x.stallMs)).toFixed(0),
          Math.max(...rounds[b].map((x) => x.stallMs)).toFixed(0),
        ]),
        notes: [
          `${ROUNDS} rounds${builds.length > 1 ? ', the builds alternating,' : ''} on one data folder, each timing the second reload of a process of its own; the database a real SQLite file; ${machine}`,
          'every file already imported with its size, mtime and inode: nothing is read or hashed',
          'with the folder journal the timed reload finds nothing journalled since the warm-up pass and answers from its kept report without listing the folder (BENCH_RELOAD_FILES sets the number of files)',
        ],
      },
      {
        title: `Reload of ${CHANGED.toLocaleString('en')} changed files among ${FILES.toLocaleString('en')}, beside the folder watcher`,
        columns: ['build', 'reload (s, median)', 'rounds (s)', 'longest event-loop stall (ms, median of rounds)'],
        rows: compared.map((build, b) => [
          build.label,
          median(changed[b].map((x) => x.seconds)).toFixed(3),
          changed[b].map((x) => x.seconds.toFixed(3)).join(', '),
          median(changed[b].map((x) => x.stallMs)).toFixed(0),
        ]),
        notes: [
          `${CHANGED_ROUNDS} rounds, the builds alternating; each process starts the watcher, reloads to warm up, rewrites the first ${CHANGED.toLocaleString('en')} files with other bytes, waits 1.5 s and times the reload; ${machine}`,
        ],
      },
      {
        title: `Reload beside the folder watcher after ${REFUSED.toLocaleString('en')} refusals`,
        columns: [
          'build',
          'nothing changed (s, median)',
          'rounds (s)',
          'one file changed (s, median)',
          'rounds (s)',
          'longest event-loop stall (ms, median of all rounds)',
        ],
        rows: compared.map((build, b) => [
          build.label,
          median(refusedQuiet[b].map((x) => x.seconds)).toFixed(3),
          refusedQuiet[b].map((x) => x.seconds.toFixed(3)).join(', '),
          median(refusedNamed[b].map((x) => x.seconds)).toFixed(3),
          refusedNamed[b].map((x) => x.seconds.toFixed(3)).join(', '),
          median([...refusedQuiet[b], ...refusedNamed[b]].map((x) => x.stallMs)).toFixed(0),
        ]),
        notes: [
          `a folder of its own: ${REFUSED_IMAGES} images and ${REFUSED.toLocaleString('en')} text files named like pictures, each already refused; ${ROUNDS} rounds with nothing changed, then ${CHANGED_ROUNDS} with the first image rewritten, the builds alternating; each process starts the watcher and reloads to warm up (a full pass, which refuses the text files again without reading them) before the timed reload; ${machine}`,
        ],
      },
      {
        title: `First pass over ${FILES.toLocaleString('en')} new files`,
        columns: ['build', 'reload (s)', 'files/s', 'longest event-loop stall (ms)'],
        rows: compared.map((build, b) => [build.label, first[b].seconds.toFixed(1), Math.round(FILES / first[b].seconds), first[b].stallMs.toFixed(0)]),
        notes: [
          `one round a build, each into a database of its own beside the same images folder (tiny JPEGs), no warm-up: every file is read, hashed, probed and stored with its analysis job; ${machine}`,
        ],
      },
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(refusedDir, { recursive: true, force: true });
  }
}
