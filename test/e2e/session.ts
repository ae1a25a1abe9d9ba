import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { FakeProviders } from '../helpers/fake-world.js';
import { startTestServer, type ServerOptions, type TestServer } from '../helpers/server.js';
import { ACCOUNTS, launchBrowser, openConsole, type ConsolePage } from './harness.js';
import { startWebWorld } from './web-world.js';

/**
 * The browser of a describe block, and the service, web world and console page each of its tests
 * starts, closed after the test whatever it did. (Apart from harness.ts, which the screenshot script
 * loads outside vitest.)
 */
export function consoleSession() {
  let browser: Browser | undefined;
  let service: TestServer | undefined;
  let world: FakeProviders | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    await service?.dispose();
    await world?.close();
    page = undefined;
    service = undefined;
    world = undefined;
  });
  const started = () => {
    if (!browser) throw new Error('the browser is not started');
    return browser;
  };
  return {
    /** The real service, with the console's accounts unless `options.accounts` says otherwise. */
    async start(options: ServerOptions = {}): Promise<TestServer> {
      service = await startTestServer({ accounts: Object.values(ACCOUNTS), ...options });
      return service;
    },
    /** The console signed in through its sign-in page, as the admin unless told otherwise. */
    async open(target: TestServer, hash?: string, as?: keyof typeof ACCOUNTS): Promise<ConsolePage> {
      const opened = await openConsole(started(), target, hash, as);
      page = opened.page;
      return opened;
    },
    /** A blank page, signed in as nobody. */
    async blank(): Promise<Page> {
      page = await started().newPage();
      return page;
    },
    /** The small web of web-world.ts; `settings` point a service at it. */
    async world(): Promise<FakeProviders> {
      world = await startWebWorld();
      return world;
    },
  };
}
