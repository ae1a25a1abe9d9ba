// `npm run backup -- <file>`: one consistent backup of SVC_DATA_DIR into <file> (a tar), while the
// service runs or not (docs/operations.md). Prints the archive's summary as one JSON line; on a
// failure, one line on stderr and exit code 1, and nothing under <file>.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeBackup } from '../lib/backup/backup.js';
import { loadConfig } from '../lib/config-file.js';
import { dataPaths } from '../lib/paths.js';

const [file, ...rest] = process.argv.slice(2);
if (!file || rest.length > 0 || file.startsWith('-')) {
  process.stderr.write('usage: npm run backup -- <file>\n');
  process.exit(2);
}
const { config } = loadConfig();
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
try {
  const summary = await writeBackup({
    dataDir: dataPaths(config.SVC_DATA_DIR).dataDir,
    archive: resolve(file),
    serviceVersion: version,
    now: () => new Date(),
  });
  process.stdout.write(`${JSON.stringify({ ...summary, archive: resolve(file) })}\n`);
} catch (error) {
  process.stderr.write(`backup failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
