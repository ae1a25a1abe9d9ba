/**
 * One round of bench/reload.ts in a process of its own: `tsx bench/reload-round.ts <build dir>
 * <data dir> <full | journal | changed <n> | first>` opens the data folder with that build's code,
 * reloads once to warm up (as a running service is), then times one reload with its longest
 * event-loop stall and prints them as JSON. `full`: a no-op reload without the folder watcher (a
 * full pass). `journal`: the same beside the watcher of the Node service (builds that have one),
 * so the timed reload finds its journal empty. `changed <n>`: beside the watcher, the first n files
 * rewritten after the warm-up. `first`: no warm-up; the timed reload is the first pass over files
 * the database has never seen. Its own process, so neither build's garbage nor the other bench modules' heap (the face
 * models alone hold 45 MB) lands in the other's collections.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';

const [buildDir, dataDir, mode, count] = process.argv.slice(2);
const lib = (module: string) => import(pathToFileURL(path.join(buildDir, 'lib', module)).href);
const [{ buildConfig }, { createEnv }, { reload }, { createLogger }] = await Promise.all([
  lib('config.ts'),
  lib('env.ts'),
  lib(existsSync(path.join(buildDir, 'lib', 'ingest', 'reload.ts')) ? 'ingest/reload.ts' : 'ingest.ts'),
  lib('log.ts'),
]);
const { config } = buildConfig({ SVC_DATA_DIR: dataDir });
const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
const watcher = path.join(buildDir, 'lib', 'ingest', 'folder-watch.ts');
const watch =
  mode !== 'full' && mode !== 'first' && existsSync(watcher)
    ? await (await import(pathToFileURL(watcher).href)).watchSubmissionsFolder(env.db, env.paths, env.log)
    : null;
try {
  // The first pass is the timed one; otherwise a warm-up pass first, as a running service has had.
  if (mode !== 'first') await reload(env);
  if (mode === 'changed') await changeFiles(Number(count));
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  const report = await reload(env);
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  console.log(
    JSON.stringify({
      seconds,
      stallMs: delay.max / 1e6,
      unchanged: report.unchanged,
      // Builds before the kept report answered whole lists, without counts.
      imported: report.counts?.imported ?? report.imported.length,
      updated: report.counts?.updated ?? report.updated.length,
    }),
  );
} finally {
  await watch?.close();
  await env.close();
}

/**
 * Rewrites the first `n` images with other bytes (two tiny JPEGs taken in turn), then waits until
 * the watcher's journal has settled, as an operator's reload a moment after a copy would.
 */
async function changeFiles(n: number): Promise<void> {
  const names = (await readdir(env.paths.imagesDir)).sort().slice(0, n);
  const other = async (background: string) =>
    sharp({ create: { width: 8, height: 8, channels: 3, background } })
      .jpeg()
      .toBuffer();
  const [a, b] = [await other('#777'), await other('#999')];
  for (const name of names) {
    const file = path.join(env.paths.imagesDir, name);
    await writeFile(file, (await readFile(file)).equals(a) ? b : a);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
}
