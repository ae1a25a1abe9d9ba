/**
 * Ingest end to end: a folder of 1-2 MP JPEGs, `POST /api/submissions/reload`, until every image is
 * analysed (fingerprints, faces, thumbnail, internal matching). The service runs as its own
 * process, as `npm start` runs it, without provider keys (enrichment is skipped at once), once for
 * this build and once for a baseline build, on the same files, in alternating rounds: by default
 * the build before analysis became queued work, or `BENCH_INGEST_BASELINE=<commit>`. The no-op
 * reload at 100,000 files is bench/reload.ts.
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import sharp, { type Sharp } from 'sharp';
import { seededRandom } from '../test/helpers/random.js';
import { EVAL_PHOTOS } from './eval-set.js';
import { CPU_PARTS, cpuPartsSince, readCpu, treeCpuSeconds, type CpuPart } from './proc.js';
import { scriptArgs } from '../test/helpers/npm-script.js';
import type { BenchTable } from './run.js';
import type { ImageService } from '../lib/ports.js';

export const name = 'ingest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'images');
/** Rounds of each build (`BENCH_INGEST_ROUNDS`, 3 by default; fewer while trying a change). */
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 3);
/** The last build that analysed inside the reload request, one image after another. */
const PREVIOUS_BUILD = '7202108';

/**
 * The photos a corpus is cut from and how: `distinct` (the default) cuts three side-by-side parts
 * of each evaluation photograph (bench/eval-set.ts: the fixtures and Debian's wallpaper photos),
 * 126 different pictures as a day's submissions mostly are; `variants` makes 24 edits of each of
 * the 5 fixture photos, a burst of near-identical pictures, the case the geometric check of
 * near-threshold pairs makes slow; `phone` makes one 12 MP picture of each evaluation photograph,
 * the size a phone's camera writes; `copies` makes a 1600 px picture of each evaluation photograph
 * and four edited copies of it among them (mirror, 7 % cropped off each side, brightened, half
 * size), a copy-heavy intake whose internal matches are listed and compared between the builds;
 * `group` makes 150 copies of one photograph (GROUP_COPIES), the group a widely reposted picture
 * makes, where every comparison touches every copy before it.
 */
const CORPUS_KINDS = ['distinct', 'variants', 'phone', 'copies', 'group'] as const;
type CorpusKind = (typeof CORPUS_KINDS)[number];

interface Corpus {
  dir: string;
  files: string[];
}

async function corpusSources(kind: CorpusKind): Promise<{ file: string; part: number; parts: number }[]> {
  if (kind === 'variants') {
    const photos = (await readdir(FIXTURES)).filter((file) => /\.(png|jpe?g)$/.test(file)).sort();
    return Array.from({ length: 120 }, (_, i) => ({ file: path.join(FIXTURES, photos[i % photos.length]), part: 0, parts: 1 }));
  }
  const photos = EVAL_PHOTOS.filter((photo) => existsSync(photo.file));
  if (photos.length < EVAL_PHOTOS.length) {
    throw new Error(
      `the ${kind} corpus needs the wallpaper packages: apt-get install plasma-workspace-wallpapers mate-backgrounds lomiri-wallpapers-16.04 lomiri-wallpapers-20.04`,
    );
  }
  if (kind === 'group') return [{ file: photos[GROUP_PHOTO].file, part: 0, parts: 1 }];
  if (kind === 'phone' || kind === 'copies') return photos.map((photo) => ({ file: photo.file, part: 0, parts: 1 }));
  return photos.flatMap((photo) => [0, 1, 2].map((part) => ({ file: photo.file, part, parts: 3 })));
}

/** The edits of the copies corpus, each applied to the 1600 px picture (`original`) and encoded alone. */
const COPY_EDITS: Record<string, (picture: Sharp, width: number, height: number) => Sharp> = {
  original: (picture) => picture,
  mirror: (picture) => picture.flop(),
  crop: (picture, width, height) =>
    picture.extract({ left: Math.round(width * 0.07), top: Math.round(height * 0.07), width: Math.round(width * 0.86), height: Math.round(height * 0.86) }),
  bright: (picture) => picture.modulate({ brightness: 1.25 }),
  half: (picture, width, height) => picture.resize(Math.round(width / 2), Math.round(height / 2)),
};

/** The photograph a copies-corpus file was made from (its name up to the edit). */
const photographOf = (file: string) => file.replace(/-[a-z]+\.jpg$/, '');

/** Each evaluation photograph at 1600 px on its longer side with grain, then its edits. */
async function generateCopies(dir: string): Promise<void> {
  for (const [i, photo] of EVAL_PHOTOS.entries()) {
    const { data, info } = await sharp(photo.file).rotate().resize(1600, 1600, { fit: 'inside' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    addGrain(data, i);
    const picture = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    for (const [edit, apply] of Object.entries(COPY_EDITS)) {
      const jpeg = await apply(sharp(picture), info.width, info.height).jpeg({ quality: 85 }).toBuffer();
      await writeFile(path.join(dir, `photo-${String(i).padStart(4, '0')}-${edit}.jpg`), jpeg);
    }
  }
}

/** The evaluation photograph the group corpus copies (a wallpaper, not a fixture). */
const GROUP_PHOTO = 5;

/** The group corpus's copies: every width with every brightness, crop and side, 150 in all. */
const GROUP_COPIES = [1600, 1400, 1200, 1000, 900].flatMap((width) =>
  [0.85, 0.95, 1, 1.05, 1.15].flatMap((brightness) =>
    [0, 0.03, 0.06].flatMap((crop) => [false, true].map((mirrored) => ({ width, brightness, crop, mirrored }))),
  ),
);

/** One photograph at 1600 px with grain, then each of its GROUP_COPIES at JPEG qualities 85-94. */
async function generateGroup(dir: string, source: string): Promise<void> {
  const { data, info } = await sharp(source).rotate().resize(1600, 1600, { fit: 'inside' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  addGrain(data, GROUP_PHOTO);
  const raw = { raw: { width: info.width, height: info.height, channels: 3 as const } };
  for (const [i, { width, brightness, crop, mirrored }] of GROUP_COPIES.entries()) {
    const [left, top] = [Math.round(info.width * crop), Math.round(info.height * crop)];
    const copy = sharp(data, raw)
      .extract({ left, top, width: info.width - 2 * left, height: info.height - 2 * top })
      .resize(width)
      .modulate({ brightness });
    await (mirrored ? copy.flop() : copy).jpeg({ quality: 85 + (i % 10) }).toFile(path.join(dir, `copy-${String(i).padStart(3, '0')}.jpg`));
  }
}

/** Sensor-like grain, so a file costs to decode what a photo costs. */
function addGrain(data: Buffer, seed: number): void {
  let state = (seed + 1) * 2654435761;
  for (let p = 0; p < data.length; p++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    data[p] = Math.max(0, Math.min(255, data[p] + ((state >>> 24) % 13) - 6));
  }
}

async function generateCorpus(kind: CorpusKind): Promise<Corpus> {
  const dir = path.join(ROOT, 'outputs', 'bench', 'ingest-corpus', kind === 'variants' ? 'v1' : `${kind}-v1`);
  await mkdir(dir, { recursive: true });
  const sources = await corpusSources(kind);
  const jpegs = async () => (await readdir(dir)).filter((f) => f.endsWith('.jpg')).sort();
  const have = await jpegs();
  const wanted = kind === 'copies' ? sources.length * Object.keys(COPY_EDITS).length : kind === 'group' ? GROUP_COPIES.length : sources.length;
  if (have.length === wanted) return { dir, files: have };
  if (kind === 'group') await generateGroup(dir, sources[0]!.file);
  else if (kind === 'copies') await generateCopies(dir);
  else await generatePictures(dir, kind, sources);
  return { dir, files: await jpegs() };
}

/** One picture per source: a part of the photo at 1-2 MP (12 for `phone`), its brightness and hue moved, with grain. */
async function generatePictures(dir: string, kind: CorpusKind, sources: { file: string; part: number; parts: number }[]): Promise<void> {
  const random = seededRandom(7);
  for (const [i, source] of sources.entries()) {
    const megapixels = kind === 'phone' ? 12 : 1 + random();
    const aspect = [4 / 3, 3 / 2, 16 / 9][Math.floor(random() * 3)];
    const width = Math.round(Math.sqrt(megapixels * 1e6 * aspect));
    const height = Math.round(width / aspect);
    const photo = sharp(source.file).rotate();
    const meta = await photo.metadata();
    // One of `parts` side-by-side strips of the photo, so no two files show the same scene.
    const strip = Math.floor(meta.width! / source.parts);
    const { data, info } = await sharp(await photo.extract({ left: source.part * strip, top: 0, width: strip, height: meta.height! }).toBuffer())
      .resize(width, height, { fit: 'cover', position: Math.floor(random() * 9) })
      .modulate({ brightness: 0.85 + random() * 0.3, hue: Math.round(random() * 30 - 15) })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    addGrain(data, i);
    const jpeg = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
      .jpeg({ quality: 85 })
      .toBuffer();
    await writeFile(path.join(dir, `photo-${String(i).padStart(4, '0')}.jpg`), jpeg);
  }
}

/** A checkout of another build beside this one, sharing node_modules; null when git cannot make it. */
function checkout(revision: string): string | null {
  const dir = path.join(ROOT, 'outputs', 'bench', `build-${revision}`);
  try {
    if (!existsSync(path.join(dir, 'server.ts'))) {
      execFileSync('git', ['worktree', 'add', '--force', '--detach', dir, revision], { cwd: ROOT, stdio: 'ignore' });
    }
    if (!existsSync(path.join(dir, 'node_modules'))) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    return dir;
  } catch {
    return null;
  }
}

interface IngestRun {
  answerS: number;
  analysedS: number;
  /** CPU time of the service process (every thread) from the reload to the last analysis, per image. */
  cpuMs: number;
  /** The same per image, by where it went (bench/proc.ts). */
  cpuParts: Record<CpuPart, number>;
  /** Internal-match evidence rows at the end (each match counts on both submissions). */
  internalMatches: number;
  /** The matched pairs of files ("a ~ b", a before b), from the evidence of either side. */
  matchedPairs: string[];
}

/**
 * Pictures that match nothing in any corpus, reloaded before the measured reload: 8 noise pictures,
 * and a blurred one with its quarter turn, a pair only keypoints check (the region hashes name
 * `rot90`), so that the geometry workers have started OpenCV as in a service that has checked a pair.
 */
async function warmUpImages(): Promise<Buffer[]> {
  const noise = (i: number) =>
    sharp({ create: { width: 1200, height: 900, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 100 + 5 * i, sigma: 40 } } });
  const blurred = await noise(8).blur(4).jpeg({ quality: 85 }).toBuffer();
  const pictures = await Promise.all(Array.from({ length: 8 }, (_, i) => noise(i).jpeg({ quality: 85 }).toBuffer()));
  return [...pictures, blurred, await sharp(blurred).rotate(90).jpeg({ quality: 85 }).toBuffer()];
}

const BENCH_TOKEN = 'bench-ingest-token-3f9a2c';
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };

async function runService(buildDir: string, { dir, files }: Corpus): Promise<IngestRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-ingest-'));
  const imagesDir = path.join(dataDir, 'submissions', 'images');
  await mkdir(imagesDir, { recursive: true });
  const warmUp = await warmUpImages();
  for (const [i, image] of warmUp.entries()) await writeFile(path.join(imagesDir, `warm-up-${i}.jpg`), image);
  const port = 20000 + Math.floor(Math.random() * 30000);
  const child = spawn(process.execPath, scriptArgs(buildDir, 'start'), {
    cwd: buildDir,
    // The token lets the bench call the API (builds before accounts ignore it).
    env: { PATH: process.env.PATH, SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_ADMIN_TOKEN: BENCH_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  // How many a reload imported: its count, or the whole list of builds before reload reports.
  const reload = async () => {
    const report = (await (await fetch(`${url}/api/submissions/reload`, { method: 'POST', headers: AUTH })).json()) as {
      imported: string[];
      counts?: { imported: number };
    };
    return report.counts?.imported ?? report.imported.length;
  };
  /** Until no analysis is queued or running (a build without the progress API analysed inside the reload request). */
  const analysed = async () => {
    const probe = await fetch(`${url}/api/jobs/progress`, { headers: AUTH });
    await probe.arrayBuffer();
    if (!probe.ok) return;
    for (;;) {
      const progress = (await (await fetch(`${url}/api/jobs/progress`, { headers: AUTH })).json()) as {
        types: { type: string; queued: number; running: number }[];
      };
      const analyse = progress.types.find((t) => t.type === 'analyse')!;
      if (analyse.queued + analyse.running === 0) return;
      // Each question costs the request process CPU that counts in the intake's: asked every 20 ms
      // they took about 2 ms an image of a 5 s intake (3.8 against 2.0 asked every 200 ms), so every
      // 50 ms should take under 1, and the end is still known to within 1 %.
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    for (let i = 0; i < 600; i++) {
      if (
        await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // A running service has its worker threads started and its code optimised; a first reload
    // after start-up would count that once-per-process cost against these images.
    if ((await reload()) !== warmUp.length) throw new Error(`the warm-up reload failed: ${output.slice(-300)}`);
    await analysed();
    for (const file of files) await writeFile(path.join(imagesDir, file), await readFile(path.join(dir, file)));
    const cpuBefore = readCpu(child.pid!);
    const started = performance.now();
    const imported = await reload();
    const answerS = (performance.now() - started) / 1000;
    if (imported !== files.length) throw new Error(`imported ${imported} of ${files.length}: ${output.slice(-300)}`);
    await analysed();
    const analysedS = (performance.now() - started) / 1000;
    const spent = cpuPartsSince(cpuBefore, readCpu(child.pid!));
    const cpuParts = Object.fromEntries(CPU_PARTS.map((part) => [part, (spent[part] * 1000) / files.length])) as Record<CpuPart, number>;
    const cpuMs = CPU_PARTS.reduce((sum, part) => sum + cpuParts[part], 0);
    // From the database, not the progress API, whose counts leave out jobs finished over a minute ago.
    const db = new Database(path.join(dataDir, 'svc.sqlite3'), { readonly: true });
    let internalMatches: number;
    let matchedPairs: string[];
    try {
      const { done } = db.prepare(`SELECT COUNT(*) AS done FROM submissions WHERE analysis_status = 'done'`).get() as { done: number };
      if (done !== warmUp.length + files.length) throw new Error(`analysed ${done - warmUp.length} of ${files.length}: ${output.slice(-300)}`);
      ({ internalMatches } = db.prepare(`SELECT COUNT(*) AS internalMatches FROM evidence WHERE source = 'internal'`).get() as { internalMatches: number });
      const links = db
        .prepare(
          `SELECT s.file AS x, m.file AS y FROM evidence e JOIN submissions s ON s.id = e.submission_id JOIN submissions m ON m.id = e.matched_submission_id
           WHERE e.source = 'internal'`,
        )
        .all() as { x: string; y: string }[];
      matchedPairs = [...new Set(links.map(({ x, y }) => [path.basename(x), path.basename(y)].sort().join(' ~ ')))].sort();
    } finally {
      db.close();
    }
    return { answerS, analysedS, cpuMs, cpuParts, internalMatches, matchedPairs };
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The copies corpus's internal matches by build: pairs of the same photograph found (of every two
 * of its five files), pairs of different photographs (false), and the pairs one build found and the
 * other did not. Every round of a build must find the same pairs (decision 0033).
 */
function copiesMatches(files: string[], current: IngestRun[], before: IngestRun[], revision: string): BenchTable {
  const groups = new Map<string, number>();
  for (const file of files) groups.set(photographOf(file), (groups.get(photographOf(file)) ?? 0) + 1);
  const expected = [...groups.values()].reduce((sum, n) => sum + (n * (n - 1)) / 2, 0);
  const same = (pair: string) => {
    const [x, y] = pair.split(' ~ ');
    return photographOf(x) === photographOf(y);
  };
  const steady = (runs: IngestRun[]) => runs.every((r) => r.matchedPairs.join() === runs[0].matchedPairs.join());
  const builds = [{ label: 'this build', runs: current }, ...(before.length ? [{ label: `baseline ${revision}`, runs: before }] : [])];
  const [mine, theirs] = builds.map(({ runs }) => new Set(runs[0].matchedPairs));
  const only = (x: Set<string>, y: Set<string> | undefined) => (y ? [...x].filter((pair) => !y.has(pair)) : []);
  const [gained, lost] = [only(mine, theirs), theirs ? only(theirs, mine) : []];
  return {
    title: `Internal matches, copies corpus: ${groups.size} photographs x ${Object.keys(COPY_EDITS).length} files`,
    columns: ['build', 'pairs of the same photograph found', 'pairs of different photographs (false)', 'the same pairs in every round'],
    rows: builds.map(({ label, runs }) => {
      const pairs = runs[0].matchedPairs;
      return [label, `${pairs.filter(same).length} of ${expected}`, pairs.filter((pair) => !same(pair)).length, steady(runs) ? 'yes' : 'NO'];
    }),
    notes: [
      ...(theirs
        ? [`found by this build only: ${gained.length ? gained.join(', ') : 'none'}`, `found by the baseline only: ${lost.length ? lost.join(', ') : 'none'}`]
        : []),
      `missed by this build: ${
        [...groups.keys()]
          .flatMap((photo) => {
            const own = files.filter((f) => photographOf(f) === photo);
            return own.flatMap((x, i) => own.slice(i + 1).map((y) => `${x} ~ ${y}`));
          })
          .filter((pair) => !mine.has(pair))
          .join(', ') || 'none'
      }`,
    ],
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** What analysis alone costs: ImageService.analyse of a build, in this process, as the job runs it. */
interface AnalysisRound {
  imagesPerS: number;
  cpuMs: number;
}

const ANALYSIS_IMAGES = 60;
const ANALYSIS_ROUNDS = 5;

/**
 * analyse() of this build and of the baseline (when it has lib/images/local-service.ts) on the same
 * photos, in alternating rounds, four analyses in flight as the two job workers and their
 * prefetch would keep; CPU time of this whole process (every thread) per image.
 */
async function analysisRounds(builds: { label: string; dir: string }[], corpus: Corpus): Promise<(string | number)[][]> {
  const images = await Promise.all(corpus.files.slice(0, ANALYSIS_IMAGES).map((f) => readFile(path.join(corpus.dir, f))));
  const services: { label: string; service: ImageService; rounds: AnalysisRound[] }[] = [];
  for (const { label, dir } of builds) {
    const module = path.join(dir, 'lib', 'images', 'local-service.ts');
    if (!existsSync(module)) continue;
    const { localImageService } = (await import(module)) as { localImageService: (maxPixels: number) => ImageService };
    services.push({ label, service: localImageService(100_000_000), rounds: [] });
  }
  try {
    // Starts the workers and lets V8 optimise the model before the clock runs.
    for (const { service } of services) for (const image of images.slice(0, 10)) await service.analyse(image);
    for (let round = 0; round < ANALYSIS_ROUNDS; round++) {
      for (const { service, rounds } of services) {
        // This process and its detection processes (the other build's are idle meanwhile).
        const cpuBefore = treeCpuSeconds(process.pid);
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (next < images.length) await service.analyse(images[next++]);
          }),
        );
        const cpuMs = ((treeCpuSeconds(process.pid) - cpuBefore) * 1000) / images.length;
        rounds.push({ imagesPerS: images.length / ((performance.now() - started) / 1000), cpuMs });
      }
    }
  } finally {
    for (const { service } of services) await service.close();
  }
  return services.map(({ label, rounds }) => {
    const cpuMs = median(rounds.map((r) => r.cpuMs));
    return [label, median(rounds.map((r) => r.imagesPerS)).toFixed(1), cpuMs.toFixed(1), ((os.availableParallelism() * 1000) / cpuMs).toFixed(1)];
  });
}

export async function run(): Promise<BenchTable[]> {
  const kind = (process.env.BENCH_INGEST_CORPUS ?? 'distinct') as CorpusKind;
  if (!CORPUS_KINDS.includes(kind)) throw new Error(`BENCH_INGEST_CORPUS is one of ${CORPUS_KINDS.join(', ')}, not ${kind}`);
  const corpus = await generateCorpus(kind);
  const { files } = corpus;
  const sizes = await Promise.all(
    files.map(async (f) => {
      const { width, height } = await sharp(path.join(corpus.dir, f)).metadata();
      return width * height;
    }),
  );
  const revision = process.env.BENCH_INGEST_BASELINE ?? PREVIOUS_BUILD;
  const baseline = checkout(revision);
  const current: IngestRun[] = [];
  const before: IngestRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    current.push(await runService(ROOT, corpus));
    if (baseline) before.push(await runService(baseline, corpus));
  }
  const row = (label: string, runs: IngestRun[]) => [
    label,
    median(runs.map((r) => r.answerS)).toFixed(2),
    median(runs.map((r) => r.analysedS)).toFixed(2),
    (files.length / median(runs.map((r) => r.analysedS))).toFixed(1),
    median(runs.map((r) => r.cpuMs)).toFixed(0),
    runs.map((r) => (files.length / r.analysedS).toFixed(1)).join(', '),
    median(runs.map((r) => r.internalMatches)),
  ];
  const rows = [row('this build', current)];
  if (baseline) rows.push(row(`baseline ${revision}${revision === PREVIOUS_BUILD ? ' (analysis inside the reload request)' : ''}`, before));
  const partsRow = (label: string, runs: IngestRun[]) => [label, ...CPU_PARTS.map((part) => median(runs.map((r) => r.cpuParts[part])).toFixed(1))];
  const parts = [partsRow('this build', current), ...(baseline ? [partsRow(`baseline ${revision}`, before)] : [])];
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');
  const matches = kind === 'copies' ? [copiesMatches(files, current, before, revision)] : [];
  const analysis = await analysisRounds([{ label: 'this build', dir: ROOT }, ...(baseline ? [{ label: `baseline ${revision}`, dir: baseline }] : [])], corpus);
  return [
    ...matches,
    {
      title: `Ingest end to end, ${kind} corpus: ${files.length} JPEGs of ${(Math.min(...sizes) / 1e6).toFixed(1)}-${(Math.max(...sizes) / 1e6).toFixed(1)} MP`,
      columns: [
        'build',
        'reload answered (s)',
        'all analysed (s)',
        'images/s',
        'CPU ms per image (service and its detection processes, all threads)',
        'images/s per round',
        'internal-match evidence rows',
      ],
      rows,
      notes: [
        `median of ${ROUNDS} alternating rounds, each on a fresh data folder, the service as its own process (${os.availableParallelism()} cores); load average at the end ${load}`,
        "measured from a second reload: the first, of 10 pictures that match nothing in the corpus (8 noise pictures, and a blurred one and its quarter turn, which only keypoints check), starts the worker threads (the geometry workers' OpenCV too) and lets V8 optimise, as in a service that is already running",
        'analysed = fingerprints, faces, thumbnail, internal matching (builds before analysis became queued work made the derived copy instead of the thumbnail); no provider keys, so enrichment is skipped',
        'CPU time from /proc of the service and every process it started (the detection processes, the request processes), from the reload request to the last analysis: the figure other load on the shared machine disturbs least',
        baseline ? '' : `the baseline build could not be checked out with git worktree (${revision}), so only this build ran`,
      ].filter(Boolean),
    },
    {
      title: 'Where the CPU goes: ms per image of the intake above',
      columns: ['build', ...CPU_PARTS],
      rows: parts,
      notes: [
        "read per thread from /proc: the service's main thread, libvips' worker threads, its other threads (libuv's pool, where sharp's pipelines start and finish, the JPEG readers' worker threads, V8's own threads, and any thread that ended during the intake), the detection processes and the other processes it started (the request processes); medians of the rounds, so a row need not add up to the median total",
      ],
    },
    {
      title: `Analysis alone: ImageService.analyse on ${Math.min(ANALYSIS_IMAGES, files.length)} of the same JPEGs`,
      columns: ['build', 'images/s (wall)', 'CPU ms per image (with the detection processes, all threads)', 'images/s the cores allow (cores x 1000 / CPU ms)'],
      rows: analysis,
      notes: [
        `median of ${ANALYSIS_ROUNDS} alternating rounds in this process, 4 analyses in flight: fingerprints, faces (one detection worker per core) and thumbnail, without storage or matching; a baseline without lib/images/local-service.ts is left out`,
      ],
    },
  ];
}
