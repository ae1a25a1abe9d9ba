/**
 * Fingerprints per second of lib/images/phash.ts against the `sharp-phash` package, side by side on
 * the same 200 camera-size JPEGs, in the same process and the same rounds.
 *
 * The corpus is generated once under outputs/bench/phash-corpus/ from the fixture photos: upscaled
 * to 2-4 MP, cropped, tinted, with sensor-like noise (so the files carry photo-like entropy rather
 * than smooth upscales), a fifth of them progressive.
 */
import { phash } from '../lib/images/fingerprint.js';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type SharpOptions } from 'sharp';
import type { BenchTable } from './run.js';
import { seededRandom } from '../test/helpers/random.js';

export const name = 'phash-throughput';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'images');
// The folder name carries the generator version so that a changed recipe never reuses old files.
const CORPUS_DIR = path.join(ROOT, 'outputs', 'bench', 'phash-corpus', 'v2');
const CORPUS_SIZE = 200;
const ROUNDS = 5;
const BATCH_SIZE = 20;
const CONCURRENCY = [1, 4];

const require = createRequire(import.meta.url);
const sharpPhash = require('sharp-phash') as (image: Buffer, options?: SharpOptions) => Promise<string>;

async function generateCorpus(): Promise<void> {
  await mkdir(CORPUS_DIR, { recursive: true });
  const photos = (await readdir(FIXTURES)).filter((file) => /\.(png|jpe?g)$/.test(file)).sort();
  const random = seededRandom(2024);
  for (let i = 0; i < CORPUS_SIZE; i++) {
    const source = await readFile(path.join(FIXTURES, photos[i % photos.length]));
    const megapixels = 2 + random() * 2;
    const aspect = [4 / 3, 3 / 2, 16 / 9, 1][Math.floor(random() * 4)];
    const width = Math.round(Math.sqrt(megapixels * 1e6 * aspect));
    const height = Math.round(width / aspect);
    // Upscale past the target size, then crop a random window of the target size.
    const cover = 1 + random() * 0.25;
    const left = Math.floor(random() * (Math.round(width * cover) - width + 1));
    const top = Math.floor(random() * (Math.round(height * cover) - height + 1));
    const pixels = await sharp(source)
      .resize(Math.round(width * cover), Math.round(height * cover), { fit: 'cover' })
      .extract({ left, top, width, height })
      .modulate({ brightness: 0.9 + random() * 0.2, saturation: 0.8 + random() * 0.4, hue: Math.round(random() * 20 - 10) })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer();
    // Sensor-like grain: an upscaled 512 px photo is too smooth to cost what a real photo costs to decode.
    const grain = 4 + Math.floor(random() * 12);
    let state = (i + 1) * 2654435761;
    for (let p = 0; p < pixels.length; p++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const value = pixels[p] + Math.round(((state >>> 24) / 255 - 0.5) * 2 * grain);
      pixels[p] = value < 0 ? 0 : value > 255 ? 255 : value;
    }
    const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 80 + Math.floor(random() * 16), progressive: random() < 0.2 })
      .toBuffer();
    await writeFile(path.join(CORPUS_DIR, `photo-${String(i).padStart(3, '0')}.jpg`), jpeg);
  }
}

async function loadCorpus(): Promise<Buffer[]> {
  const complete = existsSync(CORPUS_DIR) && (await readdir(CORPUS_DIR)).filter((file) => file.endsWith('.jpg')).length === CORPUS_SIZE;
  if (!complete) await generateCorpus();
  const files = (await readdir(CORPUS_DIR)).filter((file) => file.endsWith('.jpg')).sort();
  return Promise.all(files.map((file) => readFile(path.join(CORPUS_DIR, file))));
}

interface Contender {
  label: string;
  fingerprint: (bytes: Buffer) => Promise<unknown>;
}

/** Runs `files` with `concurrency` fingerprints in flight; returns wall and process CPU milliseconds. */
async function timeBatch(files: Buffer[], { fingerprint }: Contender, concurrency: number): Promise<{ wall: number; cpu: number }> {
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < files.length) await fingerprint(files[next++]);
    }),
  );
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

export async function run(): Promise<BenchTable[]> {
  const corpus = await loadCorpus();
  const sizes = await Promise.all(corpus.map((bytes) => sharp(bytes).metadata()));
  const megapixels = sizes.map(({ width, height }) => (width * height) / 1e6);
  const megabytes = corpus.reduce((sum, bytes) => sum + bytes.length, 0) / corpus.length / 2 ** 20;
  const progressive = sizes.filter(({ isProgressive }) => isProgressive).length;

  // libvips would otherwise answer repeated loads of the same buffer from its operation cache.
  sharp.cache(false);
  const contenders: Contender[] = [
    { label: 'lib/images/phash.ts', fingerprint: (bytes) => phash(bytes) },
    { label: 'sharp-phash 2.2.0', fingerprint: (bytes) => sharpPhash(bytes) },
    {
      // What any pHash built on sharp pays before hashing: libjpeg's shrink-on-load decode alone.
      label: 'sharp decode to 32x32 grey, no hash',
      fingerprint: (bytes) => sharp(bytes).resize(32, 32, { fit: 'fill' }).greyscale().raw().toBuffer(),
    },
  ];
  for (const contender of contenders) await timeBatch(corpus.slice(0, 20), contender, 2);

  const batches = Array.from({ length: corpus.length / BATCH_SIZE }, (_, batch) => corpus.slice(batch * BATCH_SIZE, (batch + 1) * BATCH_SIZE));
  const rows: (string | number)[][] = [];
  for (const concurrency of CONCURRENCY) {
    const rates = contenders.map(() => [] as number[]);
    const cpuPerFingerprint = contenders.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      const totals = contenders.map(() => ({ wall: 0, cpu: 0 }));
      for (const [batchIndex, batch] of batches.entries()) {
        // Small batches, contenders interleaved and their order rotated, so that load from other
        // work on the machine falls on all of them alike.
        for (let turn = 0; turn < contenders.length; turn++) {
          const index = (turn + batchIndex + round) % contenders.length;
          const { wall, cpu } = await timeBatch(batch, contenders[index], concurrency);
          totals[index].wall += wall;
          totals[index].cpu += cpu;
        }
      }
      totals.forEach(({ wall, cpu }, index) => {
        rates[index].push(corpus.length / (wall / 1000));
        cpuPerFingerprint[index].push(cpu / corpus.length);
      });
    }
    const medianRates = rates.map(median);
    contenders.forEach(({ label }, index) => {
      rows.push([
        label,
        concurrency,
        medianRates[index].toFixed(1),
        `${Math.min(...rates[index]).toFixed(1)}-${Math.max(...rates[index]).toFixed(1)}`,
        median(cpuPerFingerprint[index]).toFixed(2),
        `${(medianRates[index] / medianRates[1]).toFixed(2)}x`,
      ]);
    });
  }

  return [
    {
      title:
        `pHash throughput: ${corpus.length} JPEGs of ${Math.min(...megapixels).toFixed(1)}-${Math.max(...megapixels).toFixed(1)} MP ` +
        `(mean ${(megapixels.reduce((a, b) => a + b, 0) / megapixels.length).toFixed(1)} MP, ${megabytes.toFixed(2)} MiB, ${progressive} progressive)`,
      columns: ['implementation', 'in flight', 'fingerprints/s (median)', 'range over rounds', 'CPU ms per fingerprint', 'vs sharp-phash'],
      rows,
      notes: [
        `${ROUNDS} rounds; each round runs every contender over all files in batches of ${BATCH_SIZE}, interleaved, order rotated; the median round is reported.`,
        'Fair by construction: same files already in memory (no disk I/O timed), same process, same number of fingerprints in flight, ' +
          `same libuv pool and libvips settings (${sharp.concurrency()} libvips thread(s) per image, operation cache off for all). ` +
          'sharp-phash is called as published (buffer in, default options); it also gets JPEG shrink-on-load from its 32x32 resize.',
        'The decode row bounds any pHash built on sharp: even at 1/8 scale libjpeg decodes every AC coefficient of every scan. ' +
          "lib/images/phash.ts reads a JPEG's luma DC grid itself (lib/images/jpeg-dc.ts, equal to libjpeg's 1/8-scale decode, " +
          'tested bit for bit): it steps over AC codes several at a time and jumps over progressive AC scans. ' +
          `It runs in worker threads (one per core, ${os.availableParallelism()} here), as sharp-phash's decodes run in the libuv pool.`,
        'CPU ms is process CPU time (main thread and libvips threads) per fingerprint, less sensitive than wall time to other work on the ' +
          `${os.availableParallelism()} shared cores.`,
      ],
    },
  ];
}
