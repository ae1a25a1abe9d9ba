import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, openConsole, startService, type ConsolePage, type Seed, type Service } from './harness.js';

/**
 * The browser of a describe block, and the service and console page each of its tests starts,
 * closed after the test whatever it did. (Apart from harness.ts, which the screenshot script loads
 * outside vitest.)
 */
export function consoleSession() {
  let browser: Browser | undefined;
  let service: Service | undefined;
  let opened: ConsolePage | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await opened?.page.context().close();
    await service?.dispose();
    opened = undefined;
    service = undefined;
  });
  return {
    async start(seed: Seed): Promise<Service> {
      service = await startService(seed);
      return service;
    },
    async open(target: Service, hash: string): Promise<ConsolePage> {
      if (!browser) throw new Error('the browser is not started');
      opened = await openConsole(browser, target, hash);
      return opened;
    },
  };
}
