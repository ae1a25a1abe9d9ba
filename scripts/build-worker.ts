// Bundles worker.ts into dist/worker.js for workerd (wrangler deploy / dev, and the Worker tests).
// The console's static files travel inside the bundle as `virtual:console-assets`, the names of the
// database migrations as `virtual:migrations` (the Worker checks D1 holds them all before it serves);
// node:* modules are left to workerd's Node compatibility (nodejs_compat).
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { migrationFiles } from '../lib/db/migrate.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const virtualModules: Plugin = {
  name: 'virtual-modules',
  setup(b) {
    b.onResolve({ filter: /^virtual:(console-assets|migrations)$/ }, (args) => ({ path: args.path.slice('virtual:'.length), namespace: 'virtual' }));
    b.onLoad({ filter: /^migrations$/, namespace: 'virtual' }, () => ({
      contents: `export default ${JSON.stringify(migrationFiles().map((m) => m.name))};`,
      loader: 'js',
    }));
    b.onLoad({ filter: /^console-assets$/, namespace: 'virtual' }, () => {
      const dir = join(root, 'static');
      const files = Object.fromEntries(
        readdirSync(dir)
          .sort()
          .map((name) => [name, readFileSync(join(dir, name), 'utf8')]),
      );
      return { contents: `export default ${JSON.stringify(files)};`, loader: 'js' };
    });
  },
};

/**
 * Builds the bundle; returns its path. Written aside and renamed into place, so a workerd starting
 * meanwhile (another test or bench building the same bundle) never reads half a file.
 */
export async function buildWorker(outfile = join(root, 'dist', 'worker.js')): Promise<string> {
  const aside = `${outfile}.${process.pid}.tmp`;
  await build({
    entryPoints: [join(root, 'worker.ts')],
    outfile: aside,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'import'],
    external: ['node:*'],
    plugins: [virtualModules],
    logLevel: 'warning',
  });
  renameSync(aside, outfile);
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await buildWorker()}\n`);
}
