/**
 * `npm run bench` runs every benchmark module below and prints its tables as markdown.
 * `npm run bench -- index` runs only the modules whose name contains "index".
 * Figures depend on the machine; the header line says which one produced them.
 */
import os from 'node:os';
import sharp from 'sharp';
import * as bundle from './bundle.js';
import * as comparisons from './comparisons.js';
import * as faces from './faces.js';
import * as indexQuery from './index-query.js';
import * as ingest from './ingest.js';
import * as longDay from './long-day.js';
import * as phashThroughput from './phash-throughput.js';
import * as queueLoad from './queue-load.js';
import * as reloadBench from './reload.js';
import * as geometry from './geometry.js';
import * as robustRecall from './robust-recall.js';
import * as similarityStore from './similarity-store.js';
import * as smallTurns from './small-turns.js';
import * as turnedCanvas from './turned-canvas.js';
import * as workerRatio from './worker-ratio.js';
import * as workerScale from './worker-scale.js';

export interface BenchTable {
  title: string;
  columns: string[];
  rows: (string | number)[][];
  /** Method and caveats, printed under the table. */
  notes?: string[];
}

export interface BenchModule {
  name: string;
  run(): Promise<BenchTable[]>;
}

const BENCHES: BenchModule[] = [
  ingest,
  reloadBench,
  queueLoad,
  bundle,
  phashThroughput,
  indexQuery,
  similarityStore,
  comparisons,
  robustRecall,
  geometry,
  turnedCanvas,
  smallTurns,
  faces,
  workerRatio,
  workerScale,
  longDay,
];

function markdown(table: BenchTable): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [
    `### ${table.title}`,
    '',
    line(table.columns),
    line(table.columns.map(() => '---')),
    ...table.rows.map(line),
    ...(table.notes?.length ? ['', ...table.notes.map((note) => `- ${note}`)] : []),
    '',
  ].join('\n');
}

const filters = process.argv.slice(2);
const selected = BENCHES.filter(({ name }) => filters.length === 0 || filters.some((filter) => name.includes(filter)));
if (selected.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ')}; known: ${BENCHES.map(({ name }) => name).join(', ')}`);
  process.exit(1);
}

const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
console.log(
  `Machine: ${cpu}, ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; ` +
    `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}, ${sharp.concurrency()} libvips thread(s) per image)\n`,
);
for (const bench of selected) {
  const started = performance.now();
  for (const table of await bench.run()) console.log(markdown(table));
  console.log(`_${bench.name}: ${((performance.now() - started) / 1000).toFixed(1)} s_\n`);
}
