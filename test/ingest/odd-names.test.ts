import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture } from '../helpers/fixtures.js';

let env: TestEnv;

// A backslash is a legal character of a Linux file name, and no blob key may have one.
describe('a file in the images folder whose name no key may be', () => {
  beforeAll(async () => {
    env = await createTestEnv();
    copyFixture('astronaut.png', env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'scan\\2026.png'), 'whatever its bytes are, they are never read');
  });
  afterAll(async () => env.dispose());

  it('is listed by the folder store with its problem, beside the others', async () => {
    const page = await env.blobs.list('submissions/images/');
    expect(page.objects.map((o) => [o.key, o.problem ?? null]).sort()).toEqual([
      ['submissions/images/astronaut.png', null],
      ['submissions/images/scan\\2026.png', expect.stringContaining('backslash')],
    ]);
  });

  it('is refused with its reason by the reload, which imports the rest', async () => {
    const res = await env.call('POST', '/api/submissions/reload');
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(report.imported).toEqual(['astronaut']);
    expect(report.rejected).toEqual([
      { file: 'images/scan\\2026.png', id: null, reason: expect.stringMatching(/^file is named as no key may be \(a backslash/) },
    ]);
  });
});
