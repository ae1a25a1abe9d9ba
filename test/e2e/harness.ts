import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';

/**
 * Debian's Chromium driving the console of a real service (test/helpers/server.ts), signed in as
 * one of the accounts the service starts with.
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The accounts the service of a console test starts with (session.ts, screenshots.ts); the console signs in as one of them. */
export const ACCOUNTS = {
  admin: { username: 'admin-kim', password: 'correct horse battery', role: 'admin' },
  operator: { username: 'operator-lee', password: 'staple battery horse', role: 'operator' },
} as const;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface ConsolePage {
  page: Page;
  /** Messages of every alert/confirm/prompt the page opened (each is dismissed). */
  dialogs: string[];
  /** Uncaught script errors and console errors other than failed image loads. */
  errors: string[];
}

/** Opens the console signed in through its sign-in page (as the admin unless told otherwise). */
export async function openConsole(browser: Browser, service: { url: string }, hash = '#/queue', as: keyof typeof ACCOUNTS = 'admin'): Promise<ConsolePage> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, locale: 'ko-KR', timezoneId: 'Asia/Seoul' });
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  await page.goto(`${service.url}/${hash}`);
  await page.locator('#signin-username').fill(ACCOUNTS[as].username);
  await page.locator('#signin-password').fill(ACCOUNTS[as].password);
  await page.locator('#signin-submit').click();
  await page.locator('#sign-out').waitFor();
  return { page, dialogs, errors };
}

/** Waits until no analysis is queued or running. */
export async function waitForAnalysis(service: TestServer): Promise<void> {
  for (;;) {
    const progress = await service.api<{ types: { type: string; queued: number; running: number }[] }>('GET', '/api/jobs/progress');
    const analyse = progress.types.find((t) => t.type === 'analyse');
    if (analyse && analyse.queued + analyse.running === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the background enrichment of every listed submission has finished. */
export async function waitForEnrichment(service: TestServer, ids: string[]): Promise<void> {
  for (;;) {
    const queue = await service.api<{ items: { id: string; enrichment_status: string }[] }>('GET', '/api/review-queue?limit=200');
    const busy = queue.items.filter((s) => ids.includes(s.id) && (s.enrichment_status === 'pending' || s.enrichment_status === 'running'));
    if (busy.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
