import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * One home per concept (docs/architecture.md, "Where things live"): SQL runs only in the
 * repository (lib/repo) and the driver and migrations (lib/db); blob keys are built only in
 * lib/blobs/keys.ts; the root of lib/ stays small.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PRODUCT = ['lib', 'functions', 'scripts', 'server.ts', 'worker.ts', 'image-service.ts'];
const SQL_HOMES = ['lib/repo/', 'lib/db/'];
const SOURCE = /\.(ts|mts|mjs|js)$/;

function sourceFiles(relative: string): string[] {
  const full = path.join(ROOT, relative);
  if (SOURCE.test(relative)) return [relative];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const child = `${relative}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(child);
    return SOURCE.test(entry.name) ? [child] : [];
  });
}

/** A statement prepared on the database port, or SQL text handed to an `exec`. */
const SQL_CALL = /\.prepare\(|\.exec\(\s*[`'"]\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|PRAGMA|REPLACE)\b/i;
/** A key built by hand under one of the data root's areas. */
const BLOB_KEY = /[`'"](submissions|evidence|derived|thumbs)\/\$\{/;

/** The files whose text matches, each with its first matching line. */
function offenders(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) => {
    const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    const at = lines.findIndex((line) => pattern.test(line));
    return at >= 0 ? [`${file}:${at + 1}: ${lines[at].trim()}`] : [];
  });
}

const files = PRODUCT.flatMap(sourceFiles);

describe('where things live', () => {
  it('finds what it looks for, so an empty answer means something', () => {
    expect(SQL_CALL.test("  const row = await env.db.prepare('SELECT 1').first();")).toBe(true);
    expect(SQL_CALL.test('  db.exec(`CREATE TABLE t (a)`);')).toBe(true);
    expect(SQL_CALL.test('  const m = /^Bearer\\s+(\\S+)$/i.exec(authorization);')).toBe(false);
    expect(BLOB_KEY.test('  await env.blobs.get(`submissions/${file}`);')).toBe(true);
    expect(files).toContain('lib/repo/submissions.ts');
    expect(files).toContain('worker.ts');
  });

  it('runs SQL only in lib/repo and lib/db', () => {
    expect(
      offenders(
        files.filter((file) => !SQL_HOMES.some((home) => file.startsWith(home))),
        SQL_CALL,
      ),
    ).toEqual([]);
  });

  it('builds blob keys only in lib/blobs/keys.ts', () => {
    expect(
      offenders(
        files.filter((file) => file !== 'lib/blobs/keys.ts'),
        BLOB_KEY,
      ),
    ).toEqual([]);
  });

  it('keeps at most 8 files at the root of lib/', () => {
    const root = readdirSync(path.join(ROOT, 'lib'), { withFileTypes: true }).filter((entry) => entry.isFile());
    expect(root.map((entry) => entry.name).length, root.map((entry) => entry.name).join(', ')).toBeLessThanOrEqual(8);
  });
});
