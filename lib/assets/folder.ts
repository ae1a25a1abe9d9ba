import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleAssets } from '../ports.js';

const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'static');

/** The console's files read from static/ (names are checked by the console handler). */
export function folderAssets(dir = STATIC_DIR): ConsoleAssets {
  return { get: (name) => readFile(join(dir, name)).catch(() => null) };
}
