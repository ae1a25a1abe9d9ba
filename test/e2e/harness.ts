import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/log.js';
import { startServer, type RunningServer } from '../../server.js';
import { copyFixture } from '../helpers/fixtures.js';

/**
 * The real service on a free port with a temporary data folder, and Debian's Chromium driving the
 * console. Unless `settings` say otherwise, providers have no keys (so nothing leaves the machine)
 * and the language model points at a closed local port.
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The accounts every service starts with; the console signs in as one of them. */
export const ACCOUNTS = {
  admin: { username: 'admin-kim', password: 'correct horse battery', role: 'admin' },
  operator: { username: 'operator-lee', password: 'staple battery horse', role: 'operator' },
} as const;
const SERVICE_TOKEN = 'e2e-admin-token-3f9a1c';

export interface Seed {
  /** File name in data/submissions/images -> fixture photo copied there. */
  images?: Record<string, string>;
  /** Entries of data/submissions/submissions.json. */
  registry?: unknown[];
}

export interface Service {
  url: string;
  dataDir: string;
  server: RunningServer;
  /** Calls the JSON API; throws on a non-2xx answer with the error body in the message. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  dispose(): Promise<void>;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** `settings` (environment variable text) override the defaults, e.g. to point at fake providers. */
export async function startService(seed: Seed = {}, settings: Record<string, string> = {}, options: { accounts?: boolean } = {}): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  const imagesDir = join(dataDir, 'submissions', 'images');
  const { config } = buildConfig({
    LOCALLLM_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
    ...settings,
    SVC_DATA_DIR: dataDir,
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_ADMIN_TOKEN: SERVICE_TOKEN,
  });
  const server = await startServer(config, { log: createLogger(config, { silent: true }) });
  for (const [as, fixture] of Object.entries(seed.images ?? {})) copyFixture(fixture, imagesDir, as);
  if (seed.registry) writeFileSync(join(dataDir, 'submissions', 'submissions.json'), JSON.stringify(seed.registry, null, 2));
  const api = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${SERVICE_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(`${server.url}${path}`, init);
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  if (options.accounts !== false) for (const account of Object.values(ACCOUNTS)) await api('POST', '/api/accounts', account);
  return {
    url: server.url,
    dataDir,
    server,
    api,
    async dispose() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

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
export async function openConsole(browser: Browser, service: Service, hash = '#/queue', as: keyof typeof ACCOUNTS = 'admin'): Promise<ConsolePage> {
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

/** Waits until the background enrichment of every listed submission has finished. */
/** Waits until no analysis is queued or running. */
export async function waitForAnalysis(service: Service): Promise<void> {
  for (;;) {
    const progress = await service.api<{ types: { type: string; queued: number; running: number }[] }>('GET', '/api/jobs/progress');
    const analyse = progress.types.find((t) => t.type === 'analyse');
    if (analyse && analyse.queued + analyse.running === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function waitForEnrichment(service: Service, ids: string[]): Promise<void> {
  for (;;) {
    const queue = await service.api<{ items: { id: string; enrichment_status: string }[] }>('GET', '/api/review-queue?limit=200');
    const busy = queue.items.filter((s) => ids.includes(s.id) && (s.enrichment_status === 'pending' || s.enrichment_status === 'running'));
    if (busy.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
