import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_SIGNATURE_HEADER, signAlert } from '../../lib/providers/alerts.js';
import { fakeBraveSettings, startFakeServer, type FakeServer } from '../fakes/index.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { until } from '../helpers/until.js';

/** A webhook receiver on 127.0.0.1 that checks the signature of what it receives. */
const WEBHOOK_SECRET = 'whsec-test-8d1e77';
const fakes = useFakeProviders();
let webhook: FakeServer;
let env: TestEnv | undefined;

beforeAll(async () => {
  webhook = await startFakeServer((request) => {
    const signed = request.headers[ALERT_SIGNATURE_HEADER] === signAlert(request.body.toString('utf8'), WEBHOOK_SECRET);
    return signed ? { status: 204 } : { status: 401, json: { error: 'bad signature' } };
  });
});
afterAll(async () => webhook.close());
afterEach(async () => {
  await env?.dispose();
  env = undefined;
  webhook.reset();
});

async function searchTimes(n: number) {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await env!.call('POST', '/api/search/manual', { provider: 'regional', query: `lunar module ${i}` })).status);
  return statuses;
}

async function alerts() {
  return (await (await env!.call('GET', '/api/alerts')).json()).alerts as {
    provider: string;
    threshold: number;
    used: number;
    attempts: number;
    delivered_at: string | null;
    last_error: string | null;
  }[];
}

/** Until the webhook and the alerts' deliveries show `what`: read every 50 ms for at most 20 s. */
const when = (what: string, check: () => Promise<boolean>) => until(what, check, (held) => held, { timeoutMs: 20_000, everyMs: 50 });

describe('quota alerts', () => {
  it('alerts at 80 % and at the limit, once each per day, signed, to the webhook and in the console', async () => {
    env = await createTestEnv({
      ...fakes.settings,
      SVC_REGIONAL_DAILY_LIMIT: '5',
      SVC_ALERT_WEBHOOK_URL: webhook.url,
      SVC_ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    });
    expect(await searchTimes(3)).toEqual([200, 200, 200]);
    expect(await alerts()).toEqual([]);
    expect(await searchTimes(1)).toEqual([200]);
    await when('the first alert at the webhook', async () => webhook.requests.length === 1);
    expect(await searchTimes(3)).toEqual([200, 429, 429]);
    await when('the second alert at the webhook', async () => webhook.requests.length === 2);
    const bodies = webhook.requests.map((r) => JSON.parse(r.body.toString('utf8')));
    expect(bodies).toEqual([
      { type: 'quota', provider: 'regional', threshold_percent: 80, used: 4, daily_limit: 5, day: '2026-11-21', at: expect.any(String) },
      { type: 'quota', provider: 'regional', threshold_percent: 100, used: 5, daily_limit: 5, day: '2026-11-21', at: expect.any(String) },
    ]);
    await when('every alert delivered', async () => (await alerts()).every((a) => a.delivered_at !== null));
    expect((await alerts()).map((a) => [a.threshold, a.attempts, a.last_error])).toEqual([
      [80, 1, null],
      [100, 1, null],
    ]);
    // The secret never travels: only the signature does.
    expect(webhook.requests.every((r) => !JSON.stringify(r).includes(WEBHOOK_SECRET))).toBe(true);
    // Next day, a new count and new alerts.
    env.clock.advance(24 * 3600_000);
    expect(await alerts()).toEqual([]);
  });

  it('retries a failed delivery with back-off and never holds up the search that crossed the line', async () => {
    env = await createTestEnv({
      ...fakes.settings,
      SVC_REGIONAL_DAILY_LIMIT: '10',
      SVC_ALERT_WEBHOOK_URL: webhook.url,
      SVC_ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    });
    await searchTimes(7);
    webhook.respondOnce({ status: 503, json: { error: 'busy' } });
    webhook.respondOnce({ delayMs: 400, status: 204 });
    const started = Date.now();
    // The eighth search reaches 80 %: it answers at once, while the webhook has not taken the alert.
    expect(await searchTimes(1)).toEqual([200]);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await alerts())[0]).toMatchObject({ threshold: 80, delivered_at: null });
    await when('every alert delivered', async () => (await alerts()).every((a) => a.delivered_at !== null));
    expect((await alerts())[0]).toMatchObject({ threshold: 80, attempts: 2, last_error: null });
    // The refused first attempt, then the retry about a second later.
    expect(webhook.requests).toHaveLength(2);
    expect(webhook.requests[1].sequence).toBeGreaterThan(webhook.requests[0].sequence);
  });

  it('holds Brave, serving the global search, to its own limit: counted after success, alerted, then refused', async () => {
    env = await createTestEnv({
      ...fakes.settings,
      ...fakeBraveSettings(fakes.brave),
      SVC_BRAVE_SEARCH_DAILY_LIMIT: '2',
      SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT: '50',
    });
    fakes.brave.reset();
    fakes.search.reset();
    const search = async () => (await env!.call('POST', '/api/search/manual', { provider: 'global_search', query: 'lunar module', type: 'web' })).status;
    expect(await search()).toBe(200);
    fakes.brave.respondOnce({ status: 500, body: 'upstream down' });
    expect([await search(), await search(), await search()]).toEqual([502, 200, 429]);
    expect(fakes.brave.requests).toHaveLength(3);
    expect(fakes.search.requests).toHaveLength(0);
    expect((await alerts()).map((a) => [a.provider, a.threshold, a.used])).toEqual([
      ['global_search', 80, 2],
      ['global_search', 100, 2],
    ]);
    const providers = (await (await env.call('GET', '/api/providers')).json()).providers;
    expect(providers.find((p: { id: string }) => p.id === 'global_search')).toMatchObject({ vendor: 'brave', daily_limit: 2, used_today: 2 });
  });

  it('keeps alerts in the console when no webhook is set, and only admins may read them', async () => {
    env = await createTestEnv({ ...fakes.settings, SVC_REGIONAL_DAILY_LIMIT: '1' });
    await searchTimes(1);
    expect((await alerts()).map((a) => [a.threshold, a.attempts, a.delivered_at])).toEqual([
      [80, 0, null],
      [100, 0, null],
    ]);
    const { secret } = (await (await env.call('POST', '/api/tokens', { name: 'reader', role: 'operator' })).json()) as { secret: string };
    expect((await env.call('GET', '/api/alerts', undefined, { authorization: `Bearer ${secret}` })).status).toBe(403);
    expect(webhook.requests).toHaveLength(0);
  });
});
