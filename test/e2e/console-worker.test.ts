import { readFileSync } from 'node:fs';
import type { Miniflare } from 'miniflare';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImageService, type RunningImageService } from '../../image-service.js';
import { buildConfig } from '../../lib/config.js';
import { startLocalWorker } from '../../scripts/local-worker.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';
import { adminClient, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { ACCOUNTS, launchBrowser, openConsole } from './harness.js';

/**
 * The console against the Worker under miniflare (D1, R2, the queue, the image service, the
 * providers as the test fakes), in Chromium: the reload button goes on while a reload leaves files
 * for the next one (a Worker invocation reads only as many as its 1,000 subrequests allow) and
 * shows one report; then a submission's web evidence, a decision and the watchlist.
 */
const TOKEN = 'console-worker-token-51d2e8';

let mf: Miniflare;
let images: RunningImageService;
let browser: Browser;
let service: { url: string } & Pick<TestServer, 'api'>;
const fakes = useFakeProviders();

beforeAll(async () => {
  const { vision, web } = fakes;
  web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  web.route('/article', {
    headers: { 'content-type': 'text/html' },
    body: '<html><head><title>Cameraman</title></head><body><img src="/copy.jpg"></body></html>',
  });
  vision.detection = {
    pagesWithMatchingImages: [{ url: web.urlFor('/article'), pageTitle: 'Cameraman - Photo Archive', fullMatchingImages: [{ url: web.urlFor('/copy.jpg') }] }],
  };
  images = await startImageService(buildConfig({}).config, 0);
  mf = await startLocalWorker({
    imageServiceUrl: images.url,
    host: '127.0.0.1',
    port: 0,
    bindings: { SVC_ADMIN_TOKEN: TOKEN, ...fakes.settings },
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  service = { url, ...adminClient(() => url, TOKEN) };
  for (const account of Object.values(ACCOUNTS)) await service.api('POST', '/api/accounts', account);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await mf?.dispose();
  await images?.stop();
});

describe('the console on the Worker', () => {
  it('reloads until no file is left, shows one report of every import and refusal, then the analysed rows', async () => {
    const bucket = await mf.getR2Bucket('MEDIA');
    for (const name of ['camera.png', 'coffee.png']) await bucket.put(`submissions/images/${name}`, new Uint8Array(readFileSync(fixturePath(name))));
    // More files than one reload may read: text the image service refuses, so no analysis follows.
    for (let i = 0; i < 520; i++) await bucket.put(`submissions/images/t${String(i).padStart(3, '0')}.jpg`, `text ${i}, not a picture`);

    const { page, errors } = await openConsole(browser, service);
    await page.locator('#reload-submissions').click();
    const report = page.locator('.reload-report');
    await report.waitFor({ timeout: 60_000 });
    await expect(report.locator('dt').first().textContent()).resolves.toContain('가져옴 (imported) 2');
    await expect(report.locator('.id-list a').allTextContents()).resolves.toEqual(['camera', 'coffee']);
    // The answer names the first 100 refusals; the rest come from the kept report on request.
    await expect(report.locator('h3').first().textContent()).resolves.toContain('거부 (rejected) 520');
    await expect(report.locator('.rejected-table tbody tr').count()).resolves.toBe(100);
    const more = report.locator('.rejected-table + .reload-more');
    await expect(more.textContent()).resolves.toBe('더 보기 (420건 남음)');
    await more.click();
    await page.waitForFunction(() => document.querySelectorAll('.rejected-table tbody tr').length === 520);
    await expect(more.isHidden()).resolves.toBe(true);
    await expect(report.textContent()).resolves.not.toContain('남은 파일');
    // Two reloads ran: the first read 494 of the 522 files.
    const events = await service.api('GET', '/api/audit-events?limit=5');
    const reloads = events.events
      .filter((e: { action: string }) => e.action === 'submission.reload')
      .map((e: { details: { remaining: number } }) => e.details.remaining);
    expect(reloads).toEqual([0, 28]);

    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 2);
    await page.waitForFunction(() => /^2 \/ 2\b/.test(document.querySelector('[data-job-type="analyse"] .progress-figures')?.textContent ?? ''), undefined, {
      timeout: 60_000,
    });
    expect(errors).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('shows the web copy the enrichment found, records a decision and promotes it on the watchlist', async () => {
    await until(
      "camera's enrichment",
      async () => (await service.api('GET', '/api/submissions/camera/review')).submission.enrichment_status,
      (status) => status === 'done',
      { timeoutMs: 90_000, everyMs: 250 },
    );
    const { page, errors } = await openConsole(browser, service, '#/review/camera');
    const match = page.locator('.group-web_match .evidence').first();
    await match.waitFor();
    await expect(match.textContent()).resolves.toContain(fakes.web.urlFor('/copy.jpg'));
    await page.locator('#decision-note').fill('웹 사본 확인');
    await page.locator('.decision-button[data-decision="반려"]').click();
    await page.locator('.current-decision.decision-reject').waitFor();
    await expect(page.locator('.current-decision').textContent()).resolves.toContain('웹 사본 확인');

    const stored = await service.api('GET', '/api/submissions/camera/review');
    expect(stored.knowledge_entry.state).toBe('주의 후보');
    await page.locator('.knowledge-link a').click();
    const entry = page.locator(`.entry[data-entry-id="${stored.knowledge_entry.id}"]`);
    await entry.waitFor();
    await entry.locator('[data-action="확정 DB 편입"]').click();
    await page.waitForFunction(() => document.querySelector('.entry .badge.knowledge')?.textContent === '확정 DB 편입');
    const confirmed = await service.api('GET', `/api/knowledge?state=${encodeURIComponent('확정 DB 편입')}`);
    expect(confirmed.entries.map((e: { submission_id: string }) => e.submission_id)).toEqual(['camera']);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 180_000);
});
