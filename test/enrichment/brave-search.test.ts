import sharp from 'sharp';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/log.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { braveError, braveImageResult, braveWebResult, fakeBraveSettings, type FakeBraveSearch } from '../fakes/index.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { copyFixture, fixturePath, reencoded } from '../helpers/fixtures.js';

/**
 * The global search served by Brave (GLOBAL_SEARCH_PROVIDER=brave): the same role, evidence, quota
 * and boundaries as the custom search, with the custom search's keys set too so that a request to
 * the wrong vendor would show.
 */

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

const TITLE = 'Cameraman on the lawn - Photo Archive';
const providerEnv = () => ({ ...fakes.settings, ...fakeBraveSettings(fakes.brave) });

beforeAll(async () => {
  fakes.web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  fakes.web.addImage('/rocket.jpg', await sharp(fixturePath('rocket.jpg')).jpeg().toBuffer(), 'image/jpeg');
  fakes.web.addPage('/article', '<html><head><title>Archive</title></head><body>article</body></html>');
  fakes.web.addPage('/blog', '<html><body>a post</body></html>');
});

beforeEach(() => {
  fakes.vision.detection = {
    pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: TITLE }],
    webEntities: [{ description: 'Cameraman', score: 0.8 }],
  };
  fakes.llm.answer = (prompt) => `웹 페이지에서 발견되었습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none'}].`;
});
afterEach(async () => env?.dispose());

async function reloadAndRun(overrides: Record<string, string> = {}) {
  env = await createTestEnv({ ...providerEnv(), ...overrides });
  copyFixture('camera.png', env.paths.imagesDir);
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain();
  return review();
}

const review = async () => (await env.call('GET', '/api/submissions/camera/review')).json();
const globalSearch = async (path = '/api/providers') =>
  (await (await env.call('GET', path)).json()).providers.find((p: { id: string }) => p.id === 'global_search');
const failuresOf = (r: { evidence: Evidence[] }) => r.evidence.filter((e) => e.group === 'failures' && e.source === 'global_search');

describe('enrichment through Brave', () => {
  it('finds, verifies and captures a copy through Brave image search, as global_search evidence', async () => {
    fakes.brave.results.image = [braveImageResult('Cameraman', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/article'))];
    const r = await reloadAndRun();
    expect(r.submission.enrichment_status).toBe('done');
    const match = r.evidence.find((e: Evidence) => e.group === 'web_match' && e.source === 'global_search');
    expect(match).toMatchObject({ kind: 'image_result', url: fakes.web.urlFor('/article'), image_url: fakes.web.urlFor('/copy.jpg'), matched: true });
    expect([TITLE, 'Cameraman']).toContain(match.query);
    expect(match.similarity).toBeGreaterThanOrEqual(0.9);
    expect((await env.call('GET', match.local_media_url)).status).toBe(200);
    expect(match.pages.find((p: { url: string }) => p.url === fakes.web.urlFor('/article'))?.capture).not.toBeNull();
    expect(r.submission.risk.signals.map((s: { code: string }) => s.code)).toContain('web_match');
    // The direct match stops the helpers; the custom search is not the active vendor and hears nothing.
    expect(fakes.brave.searches('image').map((q) => q.query.q)).toEqual([TITLE, 'Cameraman']);
    expect(fakes.brave.searches('web')).toHaveLength(0);
    expect(fakes.search.requests).toHaveLength(0);
  });

  it('runs Brave web search as a helper and verifies the page picture it names', async () => {
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: '카메라맨 사진' }] };
    fakes.brave.results.web = [braveWebResult('카메라맨 블로그', fakes.web.urlFor('/blog'), fakes.web.urlFor('/copy.jpg'))];
    const r = await reloadAndRun();
    expect(fakes.brave.searches('web').map((q) => q.query)).toEqual([{ q: '카메라맨 사진 이미지', count: '3', offset: '0' }]);
    expect(r.evidence.find((e: Evidence) => e.kind === 'web_result')).toMatchObject({
      source: 'global_search',
      group: 'web_match',
      url: fakes.web.urlFor('/blog'),
      image_url: fakes.web.urlFor('/copy.jpg'),
      text: '카메라맨 블로그 ...',
    });
  });

  it('sends Brave text only: no image, no submission address or file name, nothing but q, count and offset', async () => {
    fakes.brave.results.image = [braveImageResult('Cameraman', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/article'))];
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: '카메라맨 사진' }] };
    await reloadAndRun();
    await env.call('POST', '/api/submissions/camera/rerun-enrichment', { face_crop: true });
    expect(
      (await env.call('POST', '/api/search/manual', { provider: 'global_search', query: '카메라 사진', type: 'image', submission_id: 'camera' })).status,
    ).toBe(200);
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_search', query: '카메라 블로그', type: 'web' })).status).toBe(200);
    const sent = fakes.vision.sentImages();
    expect(sent.length).toBeGreaterThan(0);
    const queries = new Set(['카메라맨 사진', '카메라맨 사진 이미지', '카메라 사진', '카메라 블로그']);
    expect(fakes.brave.requests.length).toBeGreaterThanOrEqual(4);
    for (const request of fakes.brave.requests) {
      expect(request.method).toBe('GET');
      expect(request.body.length).toBe(0);
      expect(Object.keys(request.query).filter((k) => !['q', 'count', 'offset'].includes(k))).toEqual([]);
      expect(queries.has(request.query.q)).toBe(true);
      expect(Object.keys(request.headers).filter((h) => !['accept', 'connection', 'host', 'x-subscription-token'].includes(h))).toEqual([]);
      const everything = JSON.stringify([request.path, request.query, request.headers]);
      for (const leak of ['camera.png', 'images/camera', '/media/', 'derived', ...sent.map((b) => b.toString('base64').slice(0, 40))]) {
        expect(everything).not.toContain(leak);
      }
      expect(everything).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    }
    expect(fakes.search.requests).toHaveLength(0);
  });
});

describe('quota and failures', () => {
  it('counts a Brave request against global_search only when it succeeded, under the Brave limit', async () => {
    fakes.brave.respondWith({ status: 503, body: 'upstream down' });
    const failed = await reloadAndRun({ SVC_BRAVE_SEARCH_DAILY_LIMIT: '7', SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT: '50' });
    expect(fakes.brave.requests.length).toBeGreaterThan(0);
    expect(failuresOf(failed).map((e) => e.error)).toContainEqual({ code: 'http_error', message: 'brave search: answered HTTP 503' });
    expect(await globalSearch()).toMatchObject({ vendor: 'brave', daily_limit: 7, used_today: 0, remaining_today: 7 });
    fakes.brave.reset();
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'camera', type: 'web' })).status).toBe(200);
    expect(await globalSearch('/api/providers/health')).toMatchObject({ vendor: 'brave', used_today: 1, remaining_today: 6 });
    expect((await globalSearch('/api/providers/health')).last_success_at).not.toBeNull();
  });

  it('refuses the request past the Brave daily limit without calling Brave', async () => {
    await reloadAndRun({ SVC_BRAVE_SEARCH_DAILY_LIMIT: '2' });
    expect(fakes.brave.requests).toHaveLength(2);
    fakes.brave.reset();
    const refused = await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'camera' });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.code).toBe('quota_exhausted');
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('stores malformed JSON, HTML and a 200 error body each as failure evidence, and loses nothing else', async () => {
    fakes.regional.results.image = [
      { title: 'found', link: fakes.web.urlFor('/rocket.jpg'), thumbnail: fakes.web.urlFor('/rocket.jpg'), sizewidth: '1', sizeheight: '1' },
    ];
    fakes.brave.results.image = [braveImageResult('Cameraman', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/article'))];
    const before = await reloadAndRun();
    expect(before.evidence.some((e: Evidence) => e.source === 'global_search' && e.group === 'web_match')).toBe(true);
    const used = (await globalSearch()).used_today;
    const bad: [Parameters<FakeBraveSearch['respondWith']>[0], { code: string; message: string }][] = [
      [
        { headers: { 'content-type': 'application/json' }, body: '{"type": "images", "results": [' },
        { code: 'malformed_response', message: 'brave search: the answer is not valid JSON' },
      ],
      [
        { headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Just a moment...</title>' },
        { code: 'malformed_response', message: 'brave search: answered with HTML instead of JSON' },
      ],
      [
        braveError(200, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'),
        { code: 'provider_error', message: 'brave search: answered an error (RATE_LIMITED: Request rate limit exceeded for plan.)' },
      ],
    ];
    for (const [answer, error] of bad) {
      fakes.brave.respondWith(answer);
      const rerun = await env.call('POST', '/api/submissions/camera/rerun-enrichment');
      expect(rerun.status).toBe(200);
      const added: Evidence[] = (await rerun.json()).evidence_added;
      expect(added.filter((e) => e.source === 'global_search').map((e) => [e.group, e.error])).toContainEqual(['failures', error]);
    }
    const after = await review();
    expect(after.submission.enrichment_status).toBe('done');
    // Every item stored before is still there, unchanged, and still counts where it counted.
    for (const e of before.evidence) expect(after.evidence.find((x: Evidence) => x.id === e.id)).toEqual(e);
    expect(after.submission.risk.score).toBeGreaterThanOrEqual(before.submission.risk.score);
    expect((await globalSearch()).used_today).toBe(used);
    expect((await env.call('GET', '/health')).status).toBe(200);
  });
});

describe('the key', () => {
  it('never appears in answers, stored rows, audit events or logs, even when Brave echoes it', async () => {
    const key = 'BSA-secret-brave-token-Qx41';
    fakes.brave.respondWith((request) =>
      request.query.q === 'camera'
        ? braveError(200, 'SUBSCRIPTION_TOKEN_INVALID', `token ${request.headers['x-subscription-token']} is invalid`)
        : braveError(422, 'SUBSCRIPTION_TOKEN_INVALID', `token ${request.headers['x-subscription-token']} is invalid`),
    );
    const r = await reloadAndRun({ BRAVE_SEARCH_API_KEY: key });
    expect(failuresOf(r).length).toBeGreaterThanOrEqual(1);
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'camera' })).status).toBe(502);
    expect(fakes.brave.requests.every((request) => request.headers['x-subscription-token'] === key)).toBe(true);
    const shown = await Promise.all(
      ['/api/submissions/camera/review', '/api/providers', '/api/providers/health', '/api/audit-events', '/api/bootstrap', '/api/jobs'].map(async (path) =>
        (await env.call('GET', path)).text(),
      ),
    );
    const stored = await Promise.all(
      ['evidence', 'providers', 'audit_events'].map(async (table) => JSON.stringify((await env.db.prepare(`SELECT * FROM ${table}`).all()).results)),
    );
    for (const text of [...shown, ...stored]) expect(text).not.toContain(key);
    expect(shown[2]).toContain('BRAVE_SEARCH_API_KEY');
    const lines: string[] = [];
    const log = createLogger(buildConfig({ BRAVE_SEARCH_API_KEY: key }).config, { sink: (_level, line) => lines.push(line) });
    log.error('provider answer', { detail: `token ${key} is invalid` });
    expect(lines.join('\n')).not.toContain(key);
  });
});

describe('the provider records', () => {
  it('say which vendor serves global_search, with its own variables and limit', async () => {
    env = await createTestEnv({ ...fakes.settings });
    expect(await globalSearch()).toMatchObject({
      vendor: 'custom_search',
      enabled: true,
      requiredEnv: ['GLOBAL_CUSTOM_SEARCH_API_KEY', 'GLOBAL_CUSTOM_SEARCH_CX'],
      daily_limit: 100,
    });
    await env.dispose();
    env = await createTestEnv({ GLOBAL_SEARCH_PROVIDER: 'brave', BRAVE_SEARCH_URL: fakes.brave.url, SVC_BRAVE_SEARCH_DAILY_LIMIT: '40' });
    for (const path of ['/api/providers', '/api/providers/health']) {
      expect(await globalSearch(path)).toMatchObject({
        vendor: 'brave',
        name: 'Global search (Brave)',
        enabled: false,
        configured: false,
        missing_env: ['BRAVE_SEARCH_API_KEY'],
        reason: 'missing env: BRAVE_SEARCH_API_KEY',
        requiredEnv: ['BRAVE_SEARCH_API_KEY'],
        configuredEnv: ['GLOBAL_SEARCH_PROVIDER', 'BRAVE_SEARCH_URL'],
        daily_limit: 40,
      });
    }
    const bootstrap = await (await env.call('GET', '/api/bootstrap')).json();
    expect(bootstrap.providers.find((p: { id: string }) => p.id === 'global_search').vendor).toBe('brave');
    expect(bootstrap.limits).toMatchObject({ GLOBAL_SEARCH_PROVIDER: 'brave', SVC_BRAVE_SEARCH_DAILY_LIMIT: 40 });
    expect(bootstrap.limits).not.toHaveProperty('BRAVE_SEARCH_API_KEY');
    const off = await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'camera' });
    expect(off.status).toBe(409);
    expect((await off.json()).error).toEqual({ code: 'provider_disabled', message: 'global_search is disabled: missing env BRAVE_SEARCH_API_KEY' });
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('falls back to the custom search for an unknown vendor name, and says so', () => {
    const { config, warnings } = buildConfig({ GLOBAL_SEARCH_PROVIDER: 'bing' });
    expect(config.GLOBAL_SEARCH_PROVIDER).toBe('custom_search');
    expect(warnings).toEqual(['GLOBAL_SEARCH_PROVIDER: invalid value, using the default']);
  });
});
