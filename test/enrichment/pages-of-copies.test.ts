import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Evidence } from '../../lib/repo/evidence.js';
import { MAX_PAGES_PER_IMAGE } from '../../lib/providers/global-vision.js';
import { imageSearchItem, type RawWebDetection } from '../fakes/index.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';
import { unzip } from '../helpers/unzip.js';
import { body } from '../review/seed.js';

/**
 * The pages where a verified copy lives (decision 0029): linked to the match, each captured, shown
 * in the review and carried in the case bundle. Only the API and the blob port are used, so the
 * file runs on the SQLite file and data folder and again on D1 and R2 (vitest.d1-r2.config.ts).
 */

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const NEWS = '<!doctype html><html><head><title>News</title></head><body><img src="/copy.jpg"> 사진 기사</body></html>';
const BLOG = '<!doctype html><html><head><title>Blog</title></head><body><img src="/copy.jpg"> 퍼간 사진</body></html>';

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

beforeAll(async () => {
  fakes.web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  fakes.web.addPage('/news', NEWS);
  fakes.web.addPage('/blog', BLOG);
  fakes.web.route('/gone', { status: 404, headers: { 'content-type': 'text/html' }, body: 'no' });
  for (let i = 0; i < 30; i++) fakes.web.addPage(`/p/${i}`, `<p>copy ${i}</p>`);
});
afterEach(async () => env?.dispose());

interface Review {
  submission: { enrichment_status: string };
  evidence: Evidence[];
}

/** The camera photograph submitted, analysed and enriched against the fakes as scripted. */
async function enrichCamera(detection: RawWebDetection): Promise<Review> {
  fakes.vision.detection = detection;
  env = await createTestEnv(fakes.settings);
  await env.blobs.put('submissions/images/camera.png', readFileSync(fixturePath('camera.png')));
  await body(env.call('POST', '/api/submissions/reload'));
  await env.jobs.drain();
  return body<Review>(env.call('GET', '/api/submissions/camera/review'));
}

const onlyMatch = (review: Review) => {
  const matches = review.evidence.filter((e) => e.group === 'web_match');
  expect(matches).toHaveLength(1);
  return matches[0];
};

describe('pages where a copy lives', () => {
  it('links every page naming a verified copy, captures each, and keeps a failed page on its link', async () => {
    const copy = fakes.web.urlFor('/copy.jpg');
    fakes.llm.answer = (prompt) => `같은 사진이 여러 페이지에 있습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none'}].`;
    const review = await enrichCamera({
      // The copy at the top level and again inside the pages that hold it, as the provider answers.
      fullMatchingImages: [{ url: copy }],
      pagesWithMatchingImages: [
        { url: fakes.web.urlFor('/news'), pageTitle: '<b>News</b> photo', fullMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/blog'), pageTitle: 'Blog', partialMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/gone'), pageTitle: 'Removed', fullMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/blog'), pageTitle: 'Blog again', fullMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/unrelated'), pageTitle: 'Unrelated', fullMatchingImages: [{ url: fakes.web.urlFor('/missing.jpg') }] },
      ],
    });
    expect(review.submission.enrichment_status).toBe('done');
    const match = onlyMatch(review);
    expect(match).toMatchObject({ image_url: copy, url: fakes.web.urlFor('/news'), title: 'News photo', page_count: 3 });
    expect(match.pages.map((p) => [p.url, p.title])).toEqual([
      [fakes.web.urlFor('/news'), 'News photo'],
      [fakes.web.urlFor('/blog'), 'Blog'],
      [fakes.web.urlFor('/gone'), 'Removed'],
    ]);
    const [news, blog, gone] = match.pages;
    expect(news).toMatchObject({
      error: null,
      capture: { evidence_id: match.id, final_url: fakes.web.urlFor('/news'), http_status: 200, sha256: sha256(NEWS) },
    });
    expect(blog).toMatchObject({ error: null, capture: { page_url: fakes.web.urlFor('/blog'), http_status: 200, sha256: sha256(BLOG) } });
    expect(gone).toEqual({
      url: fakes.web.urlFor('/gone'),
      title: 'Removed',
      capture: null,
      error: { code: 'http_error', message: 'the server answered HTTP 404' },
    });
    expect(news.capture!.fetched_at).toBe(env.clock.now().toISOString());
    // The kept bytes are what the page sent, served as text.
    const kept = await env.call('GET', blog.capture!.media_url!);
    expect(await kept.text()).toBe(BLOG);
    // The failed page costs nothing else: no failure item for a page beyond the match's own, and the summary was written.
    expect(review.evidence.filter((e) => e.kind === 'page_capture_failed')).toEqual([]);
    expect(review.evidence.some((e) => e.kind === 'summary')).toBe(true);
    // A page naming only an image that did not verify is linked to nothing.
    expect(review.evidence.flatMap((e) => e.pages).some((p) => p.url === fakes.web.urlFor('/unrelated'))).toBe(false);
  });

  it('puts the pages and their captures in the case bundle and lists them in its manifest', async () => {
    const copy = fakes.web.urlFor('/copy.jpg');
    await enrichCamera({
      pagesWithMatchingImages: [
        { url: fakes.web.urlFor('/news'), pageTitle: 'News', fullMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/blog'), pageTitle: 'Blog', fullMatchingImages: [{ url: copy }] },
        { url: fakes.web.urlFor('/gone'), pageTitle: 'Removed', fullMatchingImages: [{ url: copy }] },
      ],
    });
    const response = await env.call('GET', '/api/submissions/camera/bundle');
    expect(response.status).toBe(200);
    const files = unzip(Buffer.from(await response.arrayBuffer()));
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8'));
    const match = manifest.evidence.find((e: { group: string }) => e.group === 'web_match');
    expect(match.page_count).toBe(3);
    const pageFiles = manifest.files.filter((f: { role: string }) => f.role === 'page_capture');
    expect(pageFiles.map((f: { source_url: string }) => f.source_url).sort()).toEqual([fakes.web.urlFor('/blog'), fakes.web.urlFor('/news')]);
    for (const f of pageFiles) expect(sha256(files.get(f.path)!)).toBe(f.sha256);
    expect(match.pages).toEqual([
      { url: fakes.web.urlFor('/news'), title: 'News', file: pageFiles.find((f: { source_url: string }) => f.source_url.endsWith('/news')).path, error: null },
      { url: fakes.web.urlFor('/blog'), title: 'Blog', file: pageFiles.find((f: { source_url: string }) => f.source_url.endsWith('/blog')).path, error: null },
      { url: fakes.web.urlFor('/gone'), title: 'Removed', file: null, error: { code: 'http_error', message: 'the server answered HTTP 404' } },
    ]);
    expect(files.get(pageFiles.find((f: { source_url: string }) => f.source_url.endsWith('/blog')).path)!.toString('utf8')).toBe(BLOG);
  });

  it('keeps a capped, de-duplicated list of a page list naming the same image 10,000 times', async () => {
    const copy = fakes.web.urlFor('/copy.jpg');
    const review = await enrichCamera({
      pagesWithMatchingImages: Array.from({ length: 10_000 }, (_, i) => ({
        url: fakes.web.urlFor(`/p/${i % 30}`),
        pageTitle: `copy ${i % 30}`,
        fullMatchingImages: [{ url: copy }, { url: copy }],
      })),
    });
    expect(review.submission.enrichment_status).toBe('done');
    const match = onlyMatch(review);
    expect(match.page_count).toBe(30);
    expect(match.pages.map((p) => p.url)).toEqual(Array.from({ length: MAX_PAGES_PER_IMAGE }, (_, i) => fakes.web.urlFor(`/p/${i}`)));
    expect(match.pages.every((p) => p.capture?.http_status === 200)).toBe(true);
    // Each kept page fetched once; the pages past the cap never.
    const fetched = fakes.web.requests.filter((r) => r.path.startsWith('/p/')).map((r) => r.path);
    expect(fetched.sort()).toEqual(Array.from({ length: MAX_PAGES_PER_IMAGE }, (_, i) => `/p/${i}`).sort());
  });

  it('answers a match found by manual search with its page already captured', async () => {
    await enrichCamera({});
    fakes.search.results.image = [imageSearchItem('found by hand', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/news'))];
    const answer = await body<{ evidence: Evidence[] }>(
      env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'cameraman', type: 'image', submission_id: 'camera' }),
    );
    const [match] = answer.evidence.filter((e) => e.group === 'web_match');
    expect(match.pages).toEqual([
      { url: fakes.web.urlFor('/news'), title: 'found by hand', error: null, capture: expect.objectContaining({ sha256: sha256(NEWS) }) },
    ]);
  });

  it('takes a search result’s context link as the page of its image', async () => {
    fakes.search.results.image = [imageSearchItem('found by search', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/blog'))];
    const review = await enrichCamera({ webEntities: [{ description: 'Cameraman', score: 0.9 }] });
    const match = onlyMatch(review);
    expect(match).toMatchObject({ source: 'global_search', url: fakes.web.urlFor('/blog'), page_count: 1 });
    expect(match.pages).toEqual([
      {
        url: fakes.web.urlFor('/blog'),
        title: 'found by search',
        error: null,
        capture: expect.objectContaining({ page_url: fakes.web.urlFor('/blog'), http_status: 200, sha256: sha256(BLOG) }),
      },
    ]);
  });
});
