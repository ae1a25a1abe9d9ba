// `npm run dev:worker`: the Worker as it would be deployed, run locally (scripts/local-worker.ts),
// with D1, R2 and the job queue kept under data/worker/ between runs; the image service runs in this process
// tree as its own HTTP server behind the IMAGES binding. Settings come from .env and the process
// environment, as for `npm start`. Images dropped in data/submissions/images/ (and the registry
// file) are copied into the local R2 bucket at start, so the console's reload finds them; until the
// copy is done, reload and rerun answer 503 with its progress (the Worker's STARTUP binding).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startImageService } from '../image-service.js';
import { IMAGES_PREFIX, REGISTRY_KEY } from '../lib/blobs/keys.js';
import { SECRET_VARIABLES } from '../lib/config.js';
import { loadConfig } from '../lib/config-file.js';
import { dataPaths } from '../lib/paths.js';
import { startLocalWorker } from './local-worker.js';

const { config } = loadConfig();
const paths = dataPaths(config.SVC_DATA_DIR);
const persist = join(paths.dataDir, 'worker');
const images = await startImageService(config, config.SVC_IMAGE_SERVICE_PORT);

// Every setting as the Worker's string bindings (secrets included, as `wrangler secret put` would).
const bindings = Object.fromEntries(Object.entries(config).map(([name, value]) => [name, String(value)]));
const files = [
  ...readdirSync(paths.imagesDir, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => ({ file: join(paths.imagesDir, e.name), key: `${IMAGES_PREFIX}${e.name}` })),
  ...(statSync(paths.registryFile, { throwIfNoEntry: false }) ? [{ file: paths.registryFile, key: REGISTRY_KEY }] : []),
];
let done = 0;
const startup = () => (done < files.length ? `copying images into the bucket (${done} of ${files.length})` : null);
const mf = await startLocalWorker({ bindings, imageServiceUrl: images.url, host: config.SVC_HOST, port: config.SVC_PORT, persistDir: persist, startup });

const bucket = await mf.getR2Bucket('MEDIA');
let copied = 0;
for (const { file, key } of files) {
  const bytes = readFileSync(file);
  if ((await bucket.head(key))?.size !== bytes.length) {
    await bucket.put(key, new Uint8Array(bytes));
    copied++;
  }
  done++;
}

const url = await mf.ready;
const hidden = new Set<string>(SECRET_VARIABLES);
process.stdout.write(
  `${JSON.stringify({ at: new Date().toISOString(), level: 'info', message: 'worker listening', url: url.href, image_service: images.url, copied_to_r2: copied, state: persist, secrets_set: Object.keys(bindings).filter((k) => hidden.has(k) && bindings[k] !== '') })}\n`,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all([mf.dispose(), images.stop()]).then(() => process.exit(0)));
}
