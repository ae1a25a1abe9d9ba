/**
 * Screenshots of each console screen for docs/screenshots/, taken from the real service with
 * fixture photos and the fake providers of web-world.ts: `npx tsx test/e2e/screenshots.ts`.
 * Needs Debian's chromium and fonts-noto-cjk.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fixturePath } from '../helpers/fixtures.js';
import { startTestServer } from '../helpers/server.js';
import { ACCOUNTS, launchBrowser, openConsole, waitForEnrichment } from './harness.js';
import { startWebWorld } from './web-world.js';

const OUT = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

async function main() {
  mkdirSync(OUT, { recursive: true });
  const world = await startWebWorld();
  const service = await startTestServer({
    seed: {
      images: {
        'astronaut.png': 'astronaut.png',
        'astronaut-copy.png': 'astronaut.png',
        'chelsea.png': 'chelsea.png',
        'camera.png': 'camera.png',
        'rocket.jpg': 'rocket.jpg',
        'coffee.png': 'coffee.png',
      },
      registry: [
        { id: 'xss-title', title: '<img src=x onerror=alert(1)>', file: 'images/coffee.png', width: 400, height: 400, submitted_at: '2026-11-20 09:30' },
      ],
    },
    settings: world.settings,
    accounts: Object.values(ACCOUNTS),
  });
  const browser = await launchBrowser();
  try {
    const ids = (await service.api('POST', '/api/submissions/reload')).imported as string[];
    await waitForEnrichment(service, ids);
    const astronaut = await service.api('GET', '/api/submissions/astronaut/review');
    const internal = astronaut.evidence.find((e: { group: string }) => e.group === 'internal');
    await service.api('POST', `/api/evidence/${internal.id}/status`, { status: '판단에 사용' });
    await service.api('POST', '/api/submissions/chelsea/decision', { decision: '반려', note: '원 저작자 확인 필요' });
    await service.api('PATCH', '/api/providers/global_search', { enabled: false });
    // The same cat photo again: the new submission matches the attention candidate made above.
    copyFileSync(fixturePath('chelsea.png'), join(service.dataDir, 'submissions', 'images', 'chelsea-again.png'));

    const { page, dialogs } = await openConsole(browser, service, '#/queue');
    await page.locator('#reload-submissions').click();
    await page.locator('.reload-report').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length >= 7);
    await shoot(page, 'queue.png', false);

    await waitForEnrichment(service, ['chelsea-again']);
    await page.setViewportSize({ width: 1400, height: 1500 });
    await page.goto(`${service.url}/#/review/astronaut`);
    await page.locator('.evidence').first().waitFor();
    await shoot(page, 'review.png');

    await page.goto(`${service.url}/#/review/chelsea-again`);
    await page.locator('.group-attention .evidence').first().waitFor();
    await shoot(page, 'review-attention.png');
    // The lower half: the supporting summary with its citations and the folded failure records.
    const failures = page.locator('.group-failures summary');
    if (await failures.count()) await failures.click();
    await page.locator('.group-supporting').scrollIntoViewIfNeeded();
    await shoot(page, 'review-summary.png');

    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${service.url}/#/watchlist`);
    await page.locator('.entry-evidence-list, .entry-evidence p').first().waitFor();
    await shoot(page, 'watchlist.png');

    await page.goto(`${service.url}/#/providers`);
    await page.locator('.provider').first().waitFor();
    await shoot(page, 'providers.png');

    await page.goto(`${service.url}/#/search?submission=rocket`);
    await page.locator('#search-query').fill('우주비행사 사진');
    await page.locator('.search-form button[type="submit"]').click();
    await page.locator('.result-card').first().waitFor();
    await shoot(page, 'search.png');

    await page.goto(`${service.url}/#/audit`);
    await page.locator('.audit-table').waitFor();
    await shoot(page, 'audit.png');

    if (dialogs.length) throw new Error(`a dialog opened: ${dialogs.join(', ')}`);
    process.stdout.write(`screenshots written to ${OUT}\n`);
  } finally {
    await browser.close();
    await service.dispose();
    await world.close();
  }
}

/** Waits for the visible images, closes toasts unless asked to keep them, and saves the view. */
async function shoot(page: Page, name: string, closeToasts = true) {
  // Lazy images below the fold never load; only the visible ones matter for the picture.
  await page.waitForFunction(() => [...document.images].every((img) => img.complete || img.getBoundingClientRect().top > innerHeight));
  if (closeToasts) await page.evaluate(() => document.querySelectorAll('.toast').forEach((t) => t.remove()));
  await page.screenshot({ path: join(OUT, name) });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
