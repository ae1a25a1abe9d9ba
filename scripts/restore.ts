// `npm run restore -- <archive> [--data <folder>]`: a backup (npm run backup) into an empty or new
// data folder, SVC_DATA_DIR unless --data names another. Refuses a folder that is not empty, an
// archive whose files do not match their SHA-256, and a schema newer than this code's migrations,
// with one line on stderr and exit code 1, leaving the folder as it was (docs/operations.md).
import { restoreBackup } from '../lib/backup/restore.js';
import { loadConfig } from '../lib/config-file.js';

const args = process.argv.slice(2);
const at = args.indexOf('--data');
const folder = at >= 0 ? args[at + 1] : undefined;
const [archive, ...rest] = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
if (!archive || rest.length > 0 || archive.startsWith('-') || (at >= 0 && !folder)) {
  process.stderr.write('usage: npm run restore -- <archive> [--data <folder>]\n');
  process.exit(2);
}
try {
  const summary = await restoreBackup(archive, folder ?? loadConfig().config.SVC_DATA_DIR);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} catch (error) {
  process.stderr.write(`restore refused: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
