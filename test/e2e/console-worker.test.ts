import { readFileSync } from 'node:fs';
import type { Miniflare } from 'miniflare';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImageService, type RunningImageService } from '../../image-service.js';
import { buildConfig } from '../../lib/config.js';
import { startLocalWorker } from '../../scripts/local-worker.js';
import { fixturePath } from '../helpers/fixtures.js';
import { ACCOUNTS, launchBrowser, openConsole, type Service } from './harness.js';

/**
 * The console against the Worker under miniflare (D1, R2, the queue, the image service), in
 * Chromium: the reload button goes on while a reload leaves files for the next one (a Worker
 * invocation reads only as many as its 1,000 subrequests allow) and shows one report.
 */
const TOKEN = 'console-worker-token-51d2e8';

let mf: Miniflare;
let images: RunningImageService;
let browser: Browser;
let service: Service;

beforeAll(async () => {
  images = await startImageService(buildConfig({}).config, 0);
  mf = await startLocalWorker({ imageServiceUrl: images.url, host: '127.0.0.1', port: 0, bindings: { SVC_ADMIN_TOKEN: TOKEN } });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  for (const account of Object.values(ACCOUNTS)) await api('POST', '/api/accounts', account);
  service = { url, dataDir: '', server: undefined as never, api, dispose: async () => {} };
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
    await expect(report.locator('.rejected-table tbody tr').count()).resolves.toBe(520);
    await expect(report.textContent()).resolves.not.toContain('남은 파일');
    // Two reloads ran: the first read 494 of the 522 files.
    const events = await service.api('GET', '/api/audit-events?limit=5');
    const reloads = events.events.filter((e: { action: string }) => e.action === 'submission.reload').map((e: { details: { remaining: number } }) => e.details.remaining);
    expect(reloads).toEqual([0, 28]);

    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 2);
    await page.waitForFunction(() => /^2 \/ 2\b/.test(document.querySelector('[data-job-type="analyse"] .progress-figures')?.textContent ?? ''), undefined, { timeout: 60_000 });
    expect(errors).toEqual([]);
    await page.context().close();
  }, 180_000);
});
