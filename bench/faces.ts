/**
 * Face detection per setting, the detector before BlazeFace (face-api's TinyFaceDetector) first:
 * median ms per image on one core (the model alone, on a raster already
 * decoded and downscaled, as a worker receives it) and precision/recall at IoU 0.5 against the
 * hand-labelled boxes, over all and per set: test/fixtures/faces/labels.json (the fixtures and the
 * face-api demo photos) and test/fixtures/faces/debian-set.json (openly licensed photographs read
 * from installed Debian packages; the file names the apt-get install); ms per image for batches of 1 to 8; then
 * images per second end to end (sharp decode and downscale, worker, boxes) through
 * createFaceDetector with one worker and with one per core.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeForAnalysis, fromRaster } from '../lib/images/analysis-raster.js';
import { detectBlazeFaces, INPUT_SIZE, loadBlazeFace } from '../lib/images/blazeface.mjs';
import { createFaceDetector, iou, type FaceBox } from '../lib/images/faces.js';
import sharp from 'sharp';
import type { BenchTable } from './run.js';

export const name = 'faces';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 5;
const BATCH_SIZES = [1, 2, 4, 8];
const THROUGHPUT_ROUNDS = 5;

interface Labelled {
  file: string;
  source: string;
  /** Which labelled set the image belongs to, for the per-set rows. */
  set: string;
  faces: FaceBox[];
  /** Faces too small or too cut to count: a detection centred in one is neither found nor false. */
  ignored: FaceBox[];
}

interface DebianSet {
  install: string;
  images: { file: string; package: string; version: string; licence: string; faces: FaceBox[]; ignored?: FaceBox[] }[];
}

const FIXTURES = 'fixtures and face-api demo photos (labels.json)';
const DEBIAN = 'Debian packages (debian-set.json)';

function loadLabels(): { labels: Labelled[]; install: string } {
  const fixtures: Omit<Labelled, 'set' | 'ignored'>[] = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/faces/labels.json'), 'utf8'));
  const debian: DebianSet = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/faces/debian-set.json'), 'utf8'));
  return {
    labels: [
      ...fixtures.map((image) => ({ ...image, set: FIXTURES, ignored: [] })),
      ...debian.images.map((image) => ({
        file: image.file,
        source: `${image.package} ${image.version}, ${image.licence}`,
        set: DEBIAN,
        faces: image.faces,
        ignored: image.ignored ?? [],
      })),
    ],
    install: debian.install,
  };
}

const inside = (box: FaceBox, area: FaceBox) => {
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  return x >= area.x && x <= area.x + area.width && y >= area.y && y <= area.y + area.height;
};

interface Counts {
  truePositives: number;
  detected: number;
  labelled: number;
}

const ratio = (part: number, whole: number) => (whole ? (part / whole).toFixed(2) : 'n/a');

interface Raster {
  pixels: Buffer;
  width: number;
  height: number;
  /** Original pixels per raster pixel. */
  scale: number;
}

/** The model's input as the product makes it: the analysis raster (decoded once per image, shared
 * with the fingerprints and the thumbnail) shrunk to the side. */
async function raster(file: string, maxSide: number): Promise<Raster> {
  const analysed = await decodeForAnalysis(readFileSync(file));
  const { data, info } = await fromRaster(analysed)
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: data, width: info.width, height: info.height, scale: analysed.originalWidth / info.width };
}

/** The raster in the top-left corner of a black square of the given side: the model's input before it was fitted to the raster. */
function inSquare(r: Raster, side: number): Raster {
  const pixels = Buffer.alloc(side * side * 3);
  for (let row = 0; row < r.height; row++) r.pixels.copy(pixels, row * side * 3, row * r.width * 3, (row + 1) * r.width * 3);
  return { pixels, width: side, height: side, scale: r.scale };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
// The process's CPU time (every thread; the model runs on this one while the others idle): unlike
// the wall clock, it hardly grows when other work on the machine takes the core away.
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

/** The previous detector's input: the original image shrunk to the side, as the product made it then. */
async function originalRaster(file: string, maxSide: number): Promise<Raster> {
  const bytes = readFileSync(file);
  const { data, info } = await sharp(bytes)
    .rotate()
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const metadata = await sharp(bytes).metadata();
  return { pixels: data, width: info.width, height: info.height, scale: (metadata.autoOrient?.width ?? metadata.width) / info.width };
}

interface Setting {
  label: string;
  side: number;
  /** fitted: the analysis raster shrunk to the side; square: that raster in a black square of the
   * side, as BlazeFace ran before; original: the original shrunk to the side (the previous detector). */
  input: 'fitted' | 'square' | 'original';
  /** Faces in the raster's pixels. */
  detect: (r: Raster) => Promise<FaceBox[]>;
}

const blazeFace = (side: number, minScore: number) => (r: Raster) => detectBlazeFaces([{ ...r, minScore }], side).then(([faces]) => faces);

/** The detector the product ran before BlazeFace: face-api's TinyFaceDetector on tfjs's wasm backend. */
async function tinyFaceDetector(inputSize: number, minScore: number): Promise<(r: Raster) => Promise<FaceBox[]>> {
  const require = createRequire(import.meta.url);
  const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js');
  await faceapi.tf.setBackend('wasm');
  await faceapi.tf.ready();
  await faceapi.nets.tinyFaceDetector.loadFromDisk(path.join(path.dirname(require.resolve('@vladmandic/face-api/package.json')), 'model'));
  return async (r) => {
    const input = faceapi.tf.tensor3d(r.pixels, [r.height, r.width, 3], 'int32');
    try {
      const found: { box: FaceBox }[] = await faceapi.detectAllFaces(input, new faceapi.TinyFaceDetectorOptions({ inputSize, scoreThreshold: minScore }));
      return found.map(({ box }) => ({ x: box.x, y: box.y, width: box.width, height: box.height }));
    } finally {
      input.dispose();
    }
  };
}

/**
 * Precision and recall from one pass per setting; the times from RUNS rounds that go through every
 * setting in turn, so that all settings share whatever else the machine is doing.
 */
async function measure(settings: Setting[], labels: Labelled[]): Promise<{ rows: (string | number)[][]; perSet: (string | number)[][] }> {
  const rasters = new Map<string, Raster[]>();
  for (const { side, input } of settings) {
    const key = `${input === 'original' ? 'original' : 'analysis'} ${side}`;
    if (!rasters.has(key)) {
      const make = input === 'original' ? originalRaster : raster;
      rasters.set(key, await Promise.all(labels.map((image) => make(path.resolve(ROOT, image.file), side))));
    }
  }
  const inputs = settings.map(({ side, input }) =>
    rasters.get(`${input === 'original' ? 'original' : 'analysis'} ${side}`)!.map((r) => (input === 'square' ? inSquare(r, side) : r)),
  );
  const times = settings.map((): number[] => []);
  const cpuTimes = settings.map((): number[] => []);
  for (let run = 0; run < RUNS; run++) {
    for (const [index, setting] of settings.entries()) {
      for (const r of inputs[index]) {
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        await setting.detect(r);
        cpuTimes[index].push(cpuMs(process.cpuUsage(cpuBefore)));
        times[index].push(performance.now() - started);
      }
    }
  }
  const rows: (string | number)[][] = [];
  const perSet: (string | number)[][] = [];
  const sets = [...new Set(labels.map((image) => image.set))];
  for (const [index, setting] of settings.entries()) {
    const counts = new Map(sets.map((set): [string, Counts] => [set, { truePositives: 0, detected: 0, labelled: 0 }]));
    for (const [i, image] of labels.entries()) {
      const r = inputs[index][i];
      const boxes = (await setting.detect(r))
        .map((box) => ({ x: box.x * r.scale, y: box.y * r.scale, width: box.width * r.scale, height: box.height * r.scale }))
        .filter((box) => !image.ignored.some((area) => inside(box, area)));
      const count = counts.get(image.set)!;
      count.detected += boxes.length;
      count.labelled += image.faces.length;
      const unmatched = [...image.faces];
      for (const box of boxes) {
        const hit = unmatched.findIndex((truth) => iou(truth, box) >= 0.5);
        if (hit >= 0) {
          unmatched.splice(hit, 1);
          count.truePositives++;
        }
      }
    }
    const all = [...counts.values()].reduce((sum, count) => ({
      truePositives: sum.truePositives + count.truePositives,
      detected: sum.detected + count.detected,
      labelled: sum.labelled + count.labelled,
    }));
    const { truePositives, detected, labelled } = all;
    for (const [set, count] of [...counts, ['all', all] as [string, Counts]]) {
      perSet.push([setting.label, set, ratio(count.truePositives, count.detected), ratio(count.truePositives, count.labelled), `${count.truePositives}/${count.labelled} (${count.detected} boxes)`]);
    }
    rows.push([
      setting.label,
      median(times[index]).toFixed(1),
      Math.min(...times[index]).toFixed(1),
      median(cpuTimes[index]).toFixed(1),
      ratio(truePositives, detected),
      ratio(truePositives, labelled),
      `${truePositives}/${labelled} (${detected} boxes)`,
    ]);
  }
  return { rows, perSet };
}

/**
 * Model ms per image when the labelled rasters run through it in batches of each size (taken in
 * turn from the list, repeated, so batches mix shapes as uploads do); rounds alternate the sizes.
 */
async function batches(rasters: Raster[], minScore: number): Promise<(string | number)[][]> {
  const times = BATCH_SIZES.map(() => [] as number[]);
  const cpuTimes = BATCH_SIZES.map(() => [] as number[]);
  const inputs = rasters.map((r) => ({ ...r, minScore }));
  for (let run = 0; run < RUNS; run++) {
    for (const [index, size] of BATCH_SIZES.entries()) {
      for (let start = 0; start < inputs.length; start += size) {
        const batch = Array.from({ length: size }, (_, i) => inputs[(start + i) % inputs.length]);
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        await detectBlazeFaces(batch);
        cpuTimes[index].push(cpuMs(process.cpuUsage(cpuBefore)) / size);
        times[index].push((performance.now() - started) / size);
      }
    }
  }
  return BATCH_SIZES.map((size, index) => [size, median(times[index]).toFixed(1), Math.min(...times[index]).toFixed(1), median(cpuTimes[index]).toFixed(1)]);
}

/** Images per second through the product's detector: decode, downscale, detection in workers. */
async function throughput(images: Buffer[], workers: number): Promise<(string | number)[]> {
  const detector = createFaceDetector({ workers });
  try {
    // Starts every worker, loads its model and lets V8 finish optimising it before the clock runs.
    for (let round = 0; round < 3; round++) await Promise.all(images.slice(0, workers * 2).map((image) => detector.detect(image)));
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    let next = 0;
    const total = images.length * THROUGHPUT_ROUNDS;
    // Two images in flight per worker, so one decodes while the other is in the model.
    await Promise.all(
      Array.from({ length: workers * 2 }, async () => {
        while (next < total) await detector.detect(images[next++ % images.length]);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // CPU time of the whole process (every thread: main, libvips, workers) per image.
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000 / total;
    return [
      `BlazeFace ${INPUT_SIZE} px, ${workers} worker${workers > 1 ? 's' : ''}`,
      total,
      (total / seconds).toFixed(1),
      cpuMs.toFixed(1),
      ((Math.min(workers, os.availableParallelism()) * 1000) / cpuMs).toFixed(1),
    ];
  } finally {
    await detector.close();
  }
}

export async function run(): Promise<BenchTable[]> {
  const { labels, install } = loadLabels();
  const missing = labels.filter(({ file }) => {
    try {
      readFileSync(path.resolve(ROOT, file));
      return false;
    } catch {
      return true;
    }
  });
  const present = labels.filter((label) => !missing.includes(label));
  const describe = (set: string) => {
    const images = present.filter((image) => image.set === set);
    return `${set}: ${images.length} images, ${images.reduce((n, { faces }) => n + faces.length, 0)} faces`;
  };
  const load = os.loadavg()[0].toFixed(1);
  await loadBlazeFace();
  const setting = (side: number, square: boolean, minScore = 0.65): Setting => ({
    label: `BlazeFace ${side} px, ${square ? `square ${side}x${side} input` : 'input fitted to the raster (sides rounded up to 32)'}, min score ${minScore}${side === INPUT_SIZE && !square && minScore === 0.65 ? ' (shipped)' : square && side === INPUT_SIZE && minScore === 0.65 ? ' (before)' : ''}`,
    side,
    input: square ? 'square' : 'fitted',
    detect: blazeFace(side, minScore),
  });
  const previous: Setting = {
    label: 'TinyFaceDetector 416 px (face-api on tfjs wasm), the original shrunk to 416 px, min score 0.5 (the detector before BlazeFace)',
    side: 416,
    input: 'original',
    detect: await tinyFaceDetector(416, 0.5),
  };
  const { rows, perSet } = await measure(
    [previous, setting(192, true), setting(192, false), setting(192, false, 0.5), setting(160, false), setting(224, false), setting(256, false)],
    present,
  );
  const batchRows = await batches(await Promise.all(present.map((image) => raster(path.resolve(ROOT, image.file), INPUT_SIZE))), 0.65);

  // The 1-2 MP JPEGs of the labelled set (the demo photos), as bytes, as an upload arrives.
  const jpegs = present.filter(({ file, set }) => set === FIXTURES && file.endsWith('.jpg')).map(({ file }) => readFileSync(path.resolve(ROOT, file)));
  const cores = os.availableParallelism();
  const throughputRows = [await throughput(jpegs, 1)];
  if (cores > 1) throughputRows.push(await throughput(jpegs, cores));

  return [
    {
      title: `Face detection per setting (${present.length} labelled images, load average ${load} on ${cores} cores)`,
      columns: ['detector / input', 'median ms per image (model, one core)', 'fastest ms', 'median CPU ms per image', 'precision', 'recall', 'faces found / labelled'],
      rows,
      notes: [
        `BlazeFace (back-camera model) on onnxruntime-node, one thread; boxes grown 1.5x; ${RUNS} rounds through all settings, each image on a raster shrunk once to the side from the analysis raster, as the product does; IoU 0.5. The fastest run shows the cost with the least interference from other work on the machine; CPU ms (the process's, over the same runs) is the cost itself, which the wall clock exceeds when other work holds the core.`,
        'Square input: the raster in the top-left corner of a black square, as the model ran before; fitted input: each side of the raster rounded up to a multiple of 32 (a 3:2 photo at 192 px runs at 192x128).',
        "The first row is the detector the product ran before BlazeFace (the issue's bound on recall), on its own input then: the original image shrunk to 416 px, on tfjs's wasm backend from the face-api dev dependency.",
        'Labels: test/fixtures/faces/labels.json (the fixture photos and the six demo photos of the installed @vladmandic/face-api package) and test/fixtures/faces/debian-set.json (openly licensed photographs from Debian packages, read where the packages install them), boxes checked by eye; the next table splits precision and recall by set.',
        ...missing.map(({ file, source }) => `not found, skipped: ${file} (${source})`),
        ...(missing.some(({ set }) => set === DEBIAN) ? [`the Debian set needs: ${install}`] : []),
      ],
    },
    {
      title: 'Face detection precision and recall per labelled set (IoU 0.5)',
      columns: ['detector / input', 'set', 'precision', 'recall', 'faces found / labelled'],
      rows: perSet,
      notes: [
        `${describe(FIXTURES)}; ${describe(DEBIAN)} (images without a face count only against precision).`,
        'A detection centred in an ignored box (a face cut by the image edge) counts neither as found nor as false.',
      ],
    },
    {
      title: `Face detection in batches (BlazeFace ${INPUT_SIZE} px, fitted input, ${present.length} labelled images in turn)`,
      columns: ['batch size', 'median ms per image (model, one core)', 'fastest ms per image', 'median CPU ms per image'],
      rows: batchRows,
      notes: [
        'detectBlazeFaces on N rasters at once, as a worker runs the requests that arrived while it was busy; rasters whose fitted inputs differ in size still run as separate model calls, so a batch of mixed shapes gains less than one of a single shape.',
      ],
    },
    {
      title: `Face detection end to end (${jpegs.length} JPEGs of 1-2 MP, ${THROUGHPUT_ROUNDS} rounds, ${cores} cores)`,
      columns: ['detector / workers', 'images', 'images/s (wall)', 'CPU ms per image (all threads)', 'images/s the workers\' cores allow (cores x 1000 / CPU ms)'],
      rows: throughputRows,
      notes: ['createFaceDetector as the product runs it on bytes: sharp decodes the analysis raster and shrinks it in the main thread (libvips threads), each worker runs the model on the requests that reached it (a batch when several are waiting), two images in flight per worker so that decoding overlaps detection. An analysis shares that decode with the fingerprints and the thumbnail.',
        'Wall-clock images/s depend on what else the machine runs; CPU time per image does much less, so the last column is what the cores would give if nothing else ran on them.'],
    },
  ];
}
