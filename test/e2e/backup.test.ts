import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleSession } from './session.js';

/** The backup panel of the admin screen: a backup started by a click, followed until its archive is written. */
describe('backup panel', () => {
  const session = consoleSession();

  it('starts a backup from the accounts screen and shows it done with its archive, as the folder holds it', async () => {
    const service = await session.start({});
    const { page, errors } = await session.open(service, '#/accounts');
    await page.click('#start-backup');
    const row = page.locator('#backup-list tbody tr[data-status="done"]');
    await row.waitFor({ timeout: 60_000 });
    const [archive] = readdirSync(join(service.dataDir, 'backups'));
    expect(archive).toMatch(/^backup-\d{8}T\d{6}Z-\d+\.tar$/);
    expect(await row.textContent()).toContain(archive);
    expect(await row.textContent()).toContain('완료');
    expect(errors).toEqual([]);
  });
});
