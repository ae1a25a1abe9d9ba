import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { imageSearchItem } from '../fakes/index.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { faceCropChoice } from '../../lib/enrichment/pipeline.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath, reencoded } from '../helpers/fixtures.js';

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

beforeAll(async () => {
  fakes.web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  fakes.web.addImage('/coffee.png', await sharp(fixturePath('coffee.png')).png().toBuffer());
  fakes.web.addImage('/rocket.jpg', await sharp(fixturePath('rocket.jpg')).jpeg().toBuffer(), 'image/jpeg');
  fakes.web.addPage('/blog-with-copy', `<html><head><meta property="og:image" content="${fakes.web.urlFor('/copy.jpg')}"></head><body>post</body></html>`);
  fakes.web.addPage('/page-without-copy', `<html><body><img src="/rocket.jpg"></body></html>`);
  // The page a verified match was found on: page capture keeps it as evidence.
  fakes.web.addPage('/article', '<html><body>article</body></html>');
});

beforeEach(() => {
  // The model cites the first evidence id it was given, and adds a claim with no source.
  fakes.llm.answer = (prompt) => {
    const id = /"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none';
    return `이 이미지는 웹 페이지에서 발견되었습니다 [${id}]. 이 사람은 유명 배우 홍길동입니다.`;
  };
});
afterEach(async () => env?.dispose());

async function reloadAndRun(overrides: Record<string, string> = {}, image = 'camera.png') {
  env = await createTestEnv({ ...fakes.settings, ...overrides });
  copyFixture(image, env.paths.imagesDir);
  const report = await (await env.call('POST', '/api/submissions/reload')).json();
  expect(report.queued_jobs).toBe(1);
  await env.jobs.drain();
  const id = report.imported[0];
  return (await env.call('GET', `/api/submissions/${id}/review`)).json();
}

const byGroup = (review: { evidence: Evidence[] }, group: string) => review.evidence.filter((e) => e.group === group);

describe('the whole flow with all four providers', () => {
  beforeEach(() => {
    fakes.vision.detection = {
      pagesWithMatchingImages: [
        { url: fakes.web.urlFor('/article'), pageTitle: 'Cameraman on the lawn - Photo Archive', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] },
      ],
      webEntities: [{ description: 'Cameraman', score: 0.8 }],
      bestGuessLabels: [{ label: 'gentleman' }],
      partialMatchingImages: [{ url: fakes.web.urlFor('/coffee.png') }],
    };
    (fakes.regional.results.image as unknown[]).push({
      title: '<b>Cameraman</b> photo',
      link: fakes.web.urlFor('/rocket.jpg'),
      thumbnail: fakes.web.urlFor('/rocket.jpg'),
      sizewidth: '512',
      sizeheight: '512',
    });
    (fakes.search.results.image as unknown[]).push(imageSearchItem('Cameraman', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/article')));
  });

  it('verifies web matches by pHash, keeps related evidence, and stores a cited summary', async () => {
    const review = await reloadAndRun();
    expect(review.submission.enrichment_status).toBe('done');
    const matches = byGroup(review, 'web_match');
    expect(matches.length).toBeGreaterThanOrEqual(2);
    for (const m of matches) {
      expect(m.similarity).toBeGreaterThanOrEqual(0.9);
      expect(m.local_media_url).toMatch(/^\/media\/evidence\/camera\//);
      expect((await env.call('GET', String(m.local_media_url))).status).toBe(200);
    }
    expect([...new Set(matches.map((m: { source: string }) => m.source))].sort()).toEqual(['global_search', 'global_vision']);
    const coffee = review.evidence.find((e: { image_url: string }) => e.image_url === fakes.web.urlFor('/coffee.png'));
    expect(coffee).toMatchObject({ group: 'web_related', matched: false });
    expect(coffee.similarity).toBeLessThan(0.9);
    const regionalResults = review.evidence.filter((e: Evidence) => e.source === 'regional' && e.kind === 'image_result');
    expect(regionalResults.map((e: Evidence) => [e.title, e.group, e.query]).sort()).toEqual([
      ['Cameraman photo', 'web_related', 'Cameraman'],
      ['Cameraman photo', 'web_related', 'Cameraman on the lawn - Photo Archive'],
    ]);

    const [summary] = byGroup(review, 'supporting');
    expect(summary).toMatchObject({ source: 'local_llm', supporting: true, counts_toward_score: false });
    expect(summary.text).toContain('발견되었습니다');
    expect(summary.text).not.toContain('홍길동');
    expect(summary.source_evidence_ids).toHaveLength(1);
    expect(review.evidence.map((e: { id: string }) => e.id)).toContain(summary.source_evidence_ids[0]);
    expect(review.submission.risk.signals.map((s: { code: string }) => s.code)).toContain('web_match');
    expect(review.groups.map((g: { key: string }) => g.key)).toEqual(['web_match', 'web_related', 'supporting']);
  });

  it('keeps to the data-sending boundaries', async () => {
    await reloadAndRun();
    // Regional and custom search get text queries only: GET requests with no body at all.
    for (const r of [...fakes.regional.requests, ...fakes.search.requests]) {
      expect(r.method).toBe('GET');
      expect(r.body.length).toBe(0);
      expect(JSON.stringify(r.query).length).toBeLessThan(1000);
    }
    expect(fakes.regional.searches('image').map((r) => r.query.query)).toEqual(['Cameraman on the lawn - Photo Archive', 'Cameraman']);
    expect(fakes.search.searches('image').map((r) => r.query.q)).toEqual(['Cameraman on the lawn - Photo Archive', 'Cameraman']);
    // Web detection gets the derived image: a real image without EXIF or GPS.
    const sent = fakes.vision.sentImages();
    expect(sent).toHaveLength(1);
    const meta = await sharp(sent[0]).metadata();
    expect(meta.exif).toBeUndefined();
    expect(meta.width).toBe(512);
    expect(sent[0].includes(Buffer.from('GPS'))).toBe(false);
    // What was sent is kept as the record of what left the service.
    const { derived_path } = (await env.db.prepare("SELECT derived_path FROM submissions WHERE id = 'camera'").first<{ derived_path: string | null }>())!;
    expect(await env.blobs.get(derived_path!)).toEqual(sent[0]);
    // The language model gets stored evidence only, as text: no image bytes, ids it can cite.
    const prompts = fakes.llm.prompts();
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('Cameraman on the lawn');
    expect(prompts[0]).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    for (const r of fakes.llm.requests) expect(r.headers.authorization).toBeUndefined();
  });

  it('runs no helper search when an image search found a direct match', async () => {
    await reloadAndRun();
    expect(fakes.regional.searches('blog')).toHaveLength(0);
    expect(fakes.regional.searches('webkr')).toHaveLength(0);
    expect(fakes.search.searches('web')).toHaveLength(0);
  });
});

describe('helper searches', () => {
  beforeEach(() => {
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: '카메라맨 사진' }] };
    (fakes.regional.results.image as unknown[]).push({
      title: 'unrelated',
      link: fakes.web.urlFor('/rocket.jpg'),
      thumbnail: fakes.web.urlFor('/rocket.jpg'),
      sizewidth: '1',
      sizeheight: '1',
    });
  });

  it('runs blog and custom web search, then web documents, with 이미지 appended, and finds page images', async () => {
    (fakes.regional.results.blog as unknown[]).push({ title: 'blog', link: fakes.web.urlFor('/page-without-copy'), description: 'a post' });
    const review = await reloadAndRun();
    expect(fakes.regional.searches('blog').map((r) => r.query.query)).toEqual(['카메라맨 사진 이미지']);
    expect(fakes.search.searches('web').map((r) => r.query.q)).toEqual(['카메라맨 사진 이미지']);
    expect(fakes.regional.searches('webkr').map((r) => r.query.query)).toEqual(['카메라맨 사진 이미지']);
    const blog = review.evidence.find((e: { kind: string }) => e.kind === 'blog_result');
    expect(blog).toMatchObject({ url: fakes.web.urlFor('/page-without-copy'), image_url: fakes.web.urlFor('/rocket.jpg'), matched: false });
    const order = [...fakes.regional.requests, ...fakes.search.requests]
      .sort((a, b) => a.sequence - b.sequence)
      .map((r) => r.path + (r.query.searchType ?? ''));
    expect(order.indexOf('/v1/search/blog')).toBeLessThan(order.indexOf('/v1/search/webkr'));
    expect(order.indexOf('/customsearch/v1')).toBeLessThan(order.indexOf('/v1/search/webkr'));
  });

  it('stops before web documents when a blog page holds the image', async () => {
    (fakes.regional.results.blog as unknown[]).push({ title: 'copied here', link: fakes.web.urlFor('/blog-with-copy'), description: 'a post' });
    const review = await reloadAndRun();
    expect(byGroup(review, 'web_match')).toEqual([
      expect.objectContaining({ kind: 'blog_result', image_url: fakes.web.urlFor('/copy.jpg'), url: fakes.web.urlFor('/blog-with-copy') }),
    ]);
    expect(fakes.regional.searches('webkr')).toHaveLength(0);
  });
});

describe('face-crop search', () => {
  it('sends the 10 largest faces of 32 px or wider, largest first: one vision call each', () => {
    const face = (width: number) => ({ box: { x: 0, y: 0, width, height: width }, score: 0.9 });
    const faces = [31, 40, ...Array.from({ length: 12 }, (_, i) => 50 + i), 32].map(face);
    const chosen = faceCropChoice(faces).map((f) => f.box.width);
    expect(chosen).toEqual([61, 60, 59, 58, 57, 56, 55, 54, 53, 52]);
    expect(faceCropChoice([face(31), face(32)]).map((f) => f.box.width)).toEqual([32]);
  });
});

describe('failures and limits', () => {
  it('runs the local analysis alone when no provider is configured, and says why', async () => {
    env = await createTestEnv();
    copyFixture('camera.png', env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain();
    const review = await (await env.call('GET', '/api/submissions/camera/review')).json();
    expect(review.submission).toMatchObject({ analysis_status: 'done', enrichment_status: 'skipped' });
    expect(review.submission.faces).toHaveLength(1);
    const failures = byGroup(review, 'failures');
    expect(failures.map((f) => f.error?.message)).toEqual(['global_vision is disabled: missing env GLOBAL_VISION_API_KEY']);
    // The cameraman's face is the one signal: no evidence counts.
    expect(review.submission.risk).toMatchObject({ score: 10, signals: [{ code: 'faces', evidence_ids: [] }] });
    expect(fakes.requests()).toHaveLength(0);
    // Nothing left the service, so no derived copy was made or kept.
    expect(await env.db.prepare("SELECT derived_path FROM submissions WHERE id = 'camera'").first()).toEqual({ derived_path: null });
    expect((await env.blobs.list('derived/')).objects).toEqual([]);
  });

  it('reads the submitted file only when something needs its bytes: gone before its enrichment, it fails only a run that would send or verify it', async () => {
    const enrichWithFileGone = async (overrides: Record<string, string>) => {
      env = await createTestEnv(overrides);
      copyFixture('camera.png', env.paths.imagesDir);
      await env.call('POST', '/api/submissions/reload');
      await env.jobs.drain('analyse');
      await env.blobs.delete('submissions/images/camera.png');
      await env.jobs.drain('enrich');
      return (await env.call('GET', '/api/submissions/camera/review')).json();
    };
    // No provider: nothing leaves and nothing is verified, so the run ends as it would with the file.
    const alone = await enrichWithFileGone({});
    expect(alone.submission).toMatchObject({ analysis_status: 'done', enrichment_status: 'skipped' });
    expect(byGroup(alone, 'failures').map((f) => f.kind)).toEqual(['provider_disabled']);
    await env.dispose();
    // Web detection sends a copy derived from the file: the run stops there, saying why, and nothing left.
    const sent = await enrichWithFileGone(fakes.settings);
    expect(sent.submission.enrichment_status).toBe('failed');
    expect(byGroup(sent, 'failures').map((f) => f.error?.message)).toContain('the submitted file images/camera.png is gone');
    expect(fakes.requests()).toHaveLength(0);
  });

  it('records the language model being down as a failure that changes no score', async () => {
    fakes.vision.detection = {
      pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] }],
    };
    const review = await reloadAndRun({ LOCALLLM_BASE_URL: 'http://127.0.0.1:9' });
    const failure = byGroup(review, 'failures').find((f) => f.source === 'local_llm')!;
    expect(failure.error?.code).toBe('unreachable');
    // The verified match (45), the matching page (10) and the cameraman's face (10); the failure adds nothing.
    expect(review.submission.risk).toMatchObject({ score: 65, level: 'high' });
    expect(review.submission.risk.signals.flatMap((s: { evidence_ids: string[] }) => s.evidence_ids)).not.toContain(failure.id);
    const health = await (await env.call('GET', '/api/providers/health')).json();
    expect(health.providers.find((p: { id: string }) => p.id === 'local_llm').used_today).toBe(0);
  });

  it('compares at most the compare limit per search and the page-image limit per page', async () => {
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }] };
    for (let i = 0; i < 5; i++)
      (fakes.regional.results.image as unknown[]).push({
        title: `r${i}`,
        link: fakes.web.urlFor(`/rocket.jpg?n=${i}`),
        thumbnail: fakes.web.urlFor('/rocket.jpg'),
        sizewidth: '1',
        sizeheight: '1',
      });
    fakes.web.addPage('/many-images', `<html><body>${[1, 2, 3, 4, 5].map((i) => `<img src="/coffee.png?n=${i}">`).join('')}</body></html>`);
    (fakes.regional.results.blog as unknown[]).push({ title: 'many', link: fakes.web.urlFor('/many-images'), description: 'a post' });
    await reloadAndRun({ SVC_SEARCH_RESULT_COMPARE_LIMIT: '2', SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT: '1' });
    expect(fakes.regional.searches('image')).toHaveLength(1);
    expect(fakes.web.requests.filter((r) => r.path === '/rocket.jpg')).toHaveLength(2);
    expect(fakes.web.requests.filter((r) => r.path === '/coffee.png')).toHaveLength(1);
  });

  it('records a language model slower than its read timeout as a failure', async () => {
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }] };
    fakes.llm.respondWith({ delayMs: 1600, json: { model: 'm', response: 'late [ev_x]', done: true } });
    const review = await reloadAndRun({ LOCALLLM_TIMEOUT_MS: '1000' });
    const failure = byGroup(review, 'failures').find((f) => f.source === 'local_llm')!;
    expect(failure.error?.code).toBe('timeout');
    expect(byGroup(review, 'supporting')).toEqual([]);
  });

  it('consumes no quota for failed requests and records each failure', async () => {
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }] };
    fakes.regional.respondWith({ status: 500, body: 'oops' });
    const review = await reloadAndRun({ REGIONAL_API_URL: 'http://127.0.0.1:9' });
    const providers = (await (await env.call('GET', '/api/providers')).json()).providers;
    const used = Object.fromEntries(providers.map((p: { id: string; used_today: number }) => [p.id, p.used_today]));
    expect(used.regional).toBe(0);
    expect(used.global_vision).toBe(1);
    expect(byGroup(review, 'failures').filter((f: { source: string }) => f.source === 'regional').length).toBeGreaterThanOrEqual(1);
  });

  it('never exceeds a daily limit, even with concurrent jobs', async () => {
    fakes.vision.detection = {
      pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }],
      webEntities: [{ description: 'Lawn mower' }, { description: 'Tripod camera' }],
    };
    env = await createTestEnv({ ...fakes.settings, SVC_REGIONAL_DAILY_LIMIT: '3', SVC_ENRICH_CONCURRENCY: '4' });
    for (const name of ['camera.png', 'astronaut.png', 'coffee.png', 'rocket.jpg']) copyFixture(name, env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain();
    expect(fakes.regional.requests).toHaveLength(3);
    const providers = (await (await env.call('GET', '/api/providers')).json()).providers;
    expect(providers.find((p: { id: string }) => p.id === 'regional')).toMatchObject({ used_today: 3, remaining_today: 0 });
    const exhausted = (await env.db.prepare("SELECT COUNT(*) AS n FROM evidence WHERE error_code = 'quota_exhausted'").first<{ n: number }>())!.n;
    expect(exhausted).toBeGreaterThanOrEqual(1);
  });

  it('records "disabled" for queued enrichment after an emergency disable, and calls nobody', async () => {
    env = await createTestEnv(fakes.settings);
    copyFixture('camera.png', env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    expect((await env.call('POST', '/api/providers/emergency-disable')).status).toBe(200);
    await env.jobs.drain();
    expect(fakes.requests()).toHaveLength(0);
    const review = await (await env.call('GET', '/api/submissions/camera/review')).json();
    expect(byGroup(review, 'failures').map((f) => f.error)).toEqual([{ code: 'provider_disabled', message: 'global_vision is disabled: emergency disable' }]);
  });
});

describe('secrets', () => {
  it('never appear in evidence, provider diagnostics or audit events, even when a provider echoes them', async () => {
    const secrets = {
      GLOBAL_VISION_API_KEY: 'wrong-vision-key-Zq81',
      REGIONAL_CLIENT_SECRET: 'wrong-regional-secret-Pz90',
      GLOBAL_CUSTOM_SEARCH_API_KEY: 'wrong-search-key-Lk72',
    };
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }] };
    fakes.search.respondWith((request) => ({ status: 400, json: { error: { message: `API key not valid: ${request.query.key}` } } }));
    env = await createTestEnv({ ...fakes.settings, ...secrets });
    copyFixture('camera.png', env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain();
    await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'camera' });
    const shown = await Promise.all(
      ['/api/submissions/camera/review', '/api/providers', '/api/providers/health', '/api/audit-events', '/api/bootstrap', '/api/jobs'].map(async (path) =>
        (await env.call('GET', path)).text(),
      ),
    );
    const failures = JSON.parse(shown[0]).evidence.filter((e: Evidence) => e.group === 'failures');
    expect(failures.length).toBeGreaterThanOrEqual(1);
    for (const text of shown) for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    const stored =
      JSON.stringify((await env.db.prepare('SELECT * FROM evidence').all()).results) +
      JSON.stringify((await env.db.prepare('SELECT * FROM providers').all()).results);
    for (const secret of Object.values(secrets)) expect(stored).not.toContain(secret);
    expect(fakes.search.requests.some((r) => r.query.key === secrets.GLOBAL_CUSTOM_SEARCH_API_KEY)).toBe(true);
  });
});

describe('re-analysis', () => {
  it('adds face-crop web evidence, marked and never scored, and a new summary', async () => {
    fakes.vision.detection = (image) =>
      image.length < 40000
        ? { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/face'), pageTitle: 'Face page Cameraman portrait' }] }
        : { webEntities: [{ description: 'Cameraman' }] };
    await reloadAndRun();
    const before = (await (await env.call('GET', '/api/submissions/camera/review')).json()).submission.risk;
    fakes.vision.requests.length = 0;
    fakes.llm.answer = (prompt) => `근거 ${prompt.match(/"id":/g)?.length ?? 0}건을 검토했습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1]}].`;
    const res = await env.call('POST', '/api/submissions/camera/rerun-enrichment', { face_crop: true });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(fakes.vision.sentImages()).toHaveLength(2);
    const crop = await sharp(fakes.vision.sentImages()[1]).metadata();
    expect(crop.width).toBeLessThan(512);
    expect(crop.exif).toBeUndefined();
    const faceEvidence = body.evidence_added.filter((e: { face_crop: boolean }) => e.face_crop);
    expect(faceEvidence.length).toBeGreaterThan(0);
    for (const e of faceEvidence) expect(e).toMatchObject({ counts_toward_score: false, similarity: null });
    expect(body.submission.risk.score).toBe(before.score);
    const summaries = body.evidence_added.filter((e: Evidence) => e.group === 'supporting');
    expect(summaries).toHaveLength(1);
    expect(summaries[0].text).toMatch(/^근거 \d+건을 검토했습니다 \[ev_/);
    const audit = (await (await env.call('GET', '/api/audit-events')).json()).events;
    expect(audit[0]).toMatchObject({ action: 'submission.rerun', target_id: 'camera', details: { face_crop: true } });
  });

  it('answers 404 for an unknown submission and 400 for a bad body', async () => {
    env = await createTestEnv();
    expect((await env.call('POST', '/api/submissions/nope/rerun-enrichment')).status).toBe(404);
    copyFixture('camera.png', env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    expect((await env.call('POST', '/api/submissions/camera/rerun-enrichment', { face_crop: 'yes' })).status).toBe(400);
  });
});

describe('manual search', () => {
  it('sends only the text query and attaches verified results to a submission', async () => {
    (fakes.regional.results.image as unknown[]).push({
      title: 'found <b>it</b>',
      link: fakes.web.urlFor('/copy.jpg'),
      thumbnail: fakes.web.urlFor('/copy.jpg'),
      sizewidth: '1',
      sizeheight: '1',
    });
    await reloadAndRun();
    fakes.regional.requests.length = 0;
    const res = await env.call('POST', '/api/search/manual', { provider: 'regional', query: '카메라 사진', type: 'image', submission_id: 'camera' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.results).toEqual([
      { title: 'found it', url: fakes.web.urlFor('/copy.jpg'), image_url: fakes.web.urlFor('/copy.jpg'), thumbnail_url: fakes.web.urlFor('/copy.jpg') },
    ]);
    expect(body.evidence).toEqual([expect.objectContaining({ group: 'web_match', query: '카메라 사진', matched: true })]);
    expect(fakes.regional.requests).toHaveLength(1);
    expect(fakes.regional.requests[0].query.query).toBe('카메라 사진');
    expect(fakes.regional.requests[0].body.length).toBe(0);
  });

  it('answers 409 when the submitted file is gone and a result has an image to verify, storing nothing', async () => {
    (fakes.regional.results.image as unknown[]).push({
      title: 'found',
      link: fakes.web.urlFor('/copy.jpg'),
      thumbnail: fakes.web.urlFor('/copy.jpg'),
      sizewidth: '1',
      sizeheight: '1',
    });
    const before = await reloadAndRun();
    rmSync(join(env.paths.imagesDir, 'camera.png'));
    const res = await env.call('POST', '/api/search/manual', { provider: 'regional', query: '카메라 사진', type: 'image', submission_id: 'camera' });
    expect(res.status).toBe(409);
    expect((await res.json()).error).toEqual({
      code: 'conflict',
      message: 'the submitted file images/camera.png is gone: the results cannot be verified against it',
    });
    const after = await (await env.call('GET', '/api/submissions/camera/review')).json();
    expect(after.evidence).toEqual(before.evidence);
  });

  it('refuses a disabled provider, broken text and unknown fields', async () => {
    env = await createTestEnv(fakes.settings);
    await env.call('PATCH', '/api/providers/regional', { enabled: false });
    const off = await env.call('POST', '/api/search/manual', { provider: 'regional', query: 'x' });
    expect(off.status).toBe(409);
    expect((await off.json()).error.code).toBe('provider_disabled');
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'ì´ë¯¸ì§€' })).status).toBe(400);
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_vision', query: 'x' })).status).toBe(400);
    expect((await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'x', type: 'blog' })).status).toBe(400);
    expect(fakes.regional.requests).toHaveLength(0);
    expect(fakes.search.requests).toHaveLength(0);
  });
});

describe('a provider answer of every bad kind', () => {
  it('becomes failure evidence and the flow goes on', async () => {
    env = await createTestEnv(fakes.settings);
    writeFileSync(join(env.paths.imagesDir, 'camera.png'), await sharp(fixturePath('camera.png')).png().toBuffer());
    fakes.vision.detection = { pagesWithMatchingImages: [{ url: fakes.web.urlFor('/a'), pageTitle: 'Cameraman' }] };
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain();
    const bad = ['<html>maintenance</html>', '{"items": "nope"}', '{"items": [', 'null', '[]', '{"items": [{"title": 5}]}'];
    for (const body of bad) {
      fakes.regional.respondWith({ status: 200, headers: { 'content-type': 'application/json' }, body });
      const res = await env.call('POST', '/api/submissions/camera/rerun-enrichment');
      expect(res.status).toBe(200);
    }
    const failures = (await env.db.prepare("SELECT COUNT(*) AS n FROM evidence WHERE group_key = 'failures' AND source = 'regional'").first<{ n: number }>())!
      .n;
    expect(failures).toBeGreaterThanOrEqual(1);
    expect((await env.call('GET', '/health')).status).toBe(200);
  });
});
