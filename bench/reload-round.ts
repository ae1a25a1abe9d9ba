/**
 * One round of bench/reload.ts in a process of its own: `tsx bench/reload-round.ts <build dir>
 * <data dir> [journal]` opens the data folder with that build's code, reloads once to warm up (as a
 * running service is), then times one no-op reload with its longest event-loop stall and prints
 * them as JSON. With `journal`, the folder watcher of the Node service runs meanwhile (builds
 * that have one), so the timed reload finds its journal empty. Its own process, so neither build's garbage nor the other bench modules' heap (the face
 * models alone hold 45 MB) lands in the other's collections.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [buildDir, dataDir, mode] = process.argv.slice(2);
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
  mode === 'journal' && existsSync(watcher) ? await (await import(pathToFileURL(watcher).href)).watchSubmissionsFolder(env.db, env.paths, env.log) : null;
try {
  await reload(env);
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  const report = await reload(env);
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  console.log(
    JSON.stringify({ seconds, stallMs: delay.max / 1e6, unchanged: report.unchanged, imported: report.imported.length, updated: report.updated.length }),
  );
} finally {
  await watch?.close();
  await env.close();
}
