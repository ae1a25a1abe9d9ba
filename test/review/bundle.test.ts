import { createHash } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ManifestFile } from '../../lib/bundle/case.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath, reencoded } from '../helpers/fixtures.js';
import { unzip } from '../helpers/unzip.js';
import { body, refusal, seedSubmission } from './seed.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const ARTICLE = '<html><head><title>Cameraman</title></head><body><img src="/copy.jpg">기사 본문</body></html>';

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

beforeAll(async () => {
  fakes.web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  fakes.web.addImage('/copy-2.jpg', await reencoded('camera.png', 80), 'image/jpeg');
  fakes.web.route('/article', { headers: { 'content-type': 'text/html; charset=utf-8', 'last-modified': 'Mon, 31 Aug 2026 08:30:00 GMT' }, body: ARTICLE });
  fakes.web.route('/gallery', { headers: { 'content-type': 'text/html' }, body: '<p>gallery</p>' });
});
beforeEach(() => {
  fakes.vision.detection = {
    pagesWithMatchingImages: [
      { url: fakes.web.urlFor('/article'), pageTitle: 'Cameraman - Photo Archive', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] },
      { url: fakes.web.urlFor('/gallery'), pageTitle: 'Gallery', fullMatchingImages: [{ url: fakes.web.urlFor('/copy-2.jpg') }] },
    ],
  };
  fakes.llm.answer = (prompt) => `같은 사진이 기사에 실렸습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none'}].`;
});
afterEach(async () => env?.dispose());

interface Manifest {
  format: string;
  submission: { id: string; sha256: string };
  decision: { value: string; note: string | null; decided_at: string; decided_by: { type: string; name: string | null; role: string | null } | null } | null;
  risk: { score: number; level: string; signals: { code: string; evidence_ids: string[] }[] };
  files: ManifestFile[];
  missing: { evidence_id: string | null; what: string; reason: string }[];
  evidence: { id: string; status: string | null }[];
}

async function decidedCase() {
  env = await createTestEnv(fakes.settings);
  copyFixture('camera.png', env.paths.imagesDir);
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain();
  const { secret } = await body(env.call('POST', '/api/tokens', { name: 'kim desk', role: 'operator' }), 201);
  const asKim = { authorization: `Bearer ${secret}` };
  const review = await body<{ evidence: Evidence[] }>(env.call('GET', '/api/submissions/camera/review', undefined, asKim));
  const matches = review.evidence.filter((e) => e.group === 'web_match');
  expect(matches).toHaveLength(2);
  await body(env.call('POST', `/api/evidence/${matches[0].id}/status`, { status: '판단에 사용' }, asKim));
  await body(env.call('POST', '/api/submissions/camera/decision', { decision: '보류', note: '기사 게재 확인' }, asKim));
  // Another case's actions must not reach this bundle.
  await seedSubmission(env, 'other');
  await body(env.call('POST', '/api/submissions/other/decision', { decision: '승인' }));
  return {
    asKim,
    matches,
    review: await body<{ submission: { risk: unknown; sha256: string }; evidence: Evidence[] }>(env.call('GET', '/api/submissions/camera/review')),
  };
}

async function bundle(headers?: Record<string, string>) {
  const response = await env.call('GET', '/api/submissions/camera/bundle', undefined, headers);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/zip');
  expect(response.headers.get('content-disposition')).toBe('attachment; filename="case-camera.zip"');
  const files = unzip(Buffer.from(await response.arrayBuffer()));
  const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8')) as Manifest;
  return { files, manifest };
}

describe('case bundle', () => {
  it('holds every file the manifest lists, each with the SHA-256 of its bytes', async () => {
    const { asKim, matches, review } = await decidedCase();
    const { files, manifest } = await bundle(asKim);

    expect(manifest.format).toBe('image-rights-case-bundle/1');
    expect([...files.keys()].sort()).toEqual([...manifest.files.map((f) => f.path), 'manifest.json'].sort());
    for (const f of manifest.files) {
      expect(sha256(files.get(f.path)!), f.path).toBe(f.sha256);
      expect(files.get(f.path)!.length, f.path).toBe(f.bytes);
    }
    expect(manifest.missing).toEqual([]);

    const original = readFileSync(fixturePath('camera.png'));
    const image = manifest.files.find((f) => f.role === 'submission_image')!;
    expect(image.path).toBe('submission/camera.png');
    expect(files.get(image.path)!.equals(original)).toBe(true);
    expect(image.sha256).toBe(review.submission.sha256);

    const matched = manifest.files.filter((f) => f.role === 'matched_image');
    expect(matched.map((f) => f.evidence_id).sort()).toEqual(matches.map((m) => m.id).sort());
    for (const f of matched) {
      const e = matches.find((m) => m.id === f.evidence_id)!;
      expect(f.source_url).toBe(e.image_url);
      expect(f.fetched_at).toBe(e.created_at);
      expect(files.get(f.path)!.equals(readFileSync(join(env.dataDir, e.local_media_url!.slice('/media/'.length))))).toBe(true);
    }
    expect(matched.find((f) => f.evidence_id === matches[0].id)!.evidence_status).toBe('판단에 사용');

    const pages = manifest.files.filter((f) => f.role === 'page_capture');
    expect(pages.map((p) => p.source_url).sort()).toEqual([fakes.web.urlFor('/article'), fakes.web.urlFor('/gallery')]);
    const article = pages.find((p) => p.source_url === fakes.web.urlFor('/article'))!;
    expect(files.get(article.path)!.toString('utf8')).toBe(ARTICLE);
    expect(article).toMatchObject({ final_url: fakes.web.urlFor('/article'), http_status: 200, recorded_sha256: sha256(ARTICLE), sha256: sha256(ARTICLE) });
  });

  it('says who decided, the risk with its signals, the cited summary and only this case’s audit events', async () => {
    const { asKim, review } = await decidedCase();
    const { files, manifest } = await bundle(asKim);

    expect(manifest.decision).toMatchObject({ value: '보류', note: '기사 게재 확인', decided_by: { type: 'token', name: 'kim desk', role: 'operator' } });
    expect(manifest.risk).toEqual(review.submission.risk);
    expect(manifest.risk.signals.map((s) => s.code)).toContain('web_match');

    const summary = review.evidence.find((e) => e.kind === 'summary')!;
    const text = files.get('summary.md')!.toString('utf8');
    expect(text).toContain(summary.text!);
    for (const id of summary.source_evidence_ids) expect(text).toContain(`- ${id}: `);

    const audit = JSON.parse(files.get('audit-events.json')!.toString('utf8')) as {
      action: string;
      target_id: string;
      details: Record<string, unknown>;
      actor: { name: string | null };
    }[];
    expect(audit.map((a) => a.action)).toEqual(['evidence.status', 'submission.decision']);
    expect(audit.every((a) => a.actor.name === 'kim desk')).toBe(true);
    expect(JSON.stringify(audit)).not.toContain('"other"');

    // Handing the case out is recorded: the next bundle lists who took the first one.
    const again = await bundle();
    const history = JSON.parse(again.files.get('audit-events.json')!.toString('utf8')) as typeof audit;
    expect(history.map((a) => a.action)).toEqual(['evidence.status', 'submission.decision', 'submission.bundle']);
    expect(history[2]).toMatchObject({ target_id: 'camera', actor: { name: 'kim desk' }, details: { evidence: review.evidence.length, page_captures: 2 } });
  });

  it("after retention, keeps the decided case's page captures and lists the deleted images as missing", async () => {
    const { matches } = await decidedCase();
    env.clock.advance(91 * 24 * 60 * 60 * 1000);
    await body(env.call('POST', '/api/retention/run'));
    const { files, manifest } = await bundle();
    expect(manifest.missing.sort((a, b) => String(a.evidence_id).localeCompare(String(b.evidence_id)))).toEqual(
      matches
        .map((m) => ({ evidence_id: m.id, what: 'matched_image', reason: 'deleted by the retention policy' }))
        .sort((a, b) => a.evidence_id.localeCompare(b.evidence_id)),
    );
    expect(manifest.files.filter((f) => f.role === 'page_capture')).toHaveLength(2);
    for (const f of manifest.files) expect(sha256(files.get(f.path)!)).toBe(f.sha256);
  });

  it('lists a matched image whose file is gone as missing and still hands over the rest', async () => {
    const { matches } = await decidedCase();
    unlinkSync(join(env.dataDir, matches[1].local_media_url!.slice('/media/'.length)));
    const { files, manifest } = await bundle();
    expect(manifest.missing).toEqual([{ evidence_id: matches[1].id, what: 'matched_image', reason: 'the downloaded image file is gone' }]);
    for (const f of manifest.files) expect(sha256(files.get(f.path)!)).toBe(f.sha256);
  });

  it('answers 404 in the error shape for an unknown case, and only to a signed-in caller', async () => {
    env = await createTestEnv();
    await refusal(env.call('GET', '/api/submissions/nothing/bundle'), 404, 'not_found');
    await refusal(env.call('GET', '/api/submissions/%E0%A4%A/bundle'), 404, 'not_found');
    await seedSubmission(env, 'camera');
    await refusal(env.call('GET', '/api/submissions/camera/bundle', undefined, { authorization: '' }), 401, 'unauthenticated');
  });

  it('bundles a case whose image file is gone, saying so', async () => {
    env = await createTestEnv();
    await seedSubmission(env, 'camera');
    const { manifest, files } = await bundle();
    expect(manifest.missing).toEqual([{ evidence_id: null, what: 'submission_image', reason: 'the submitted file is no longer in the submissions folder' }]);
    expect(manifest.decision).toBeNull();
    expect([...files.keys()].sort()).toEqual(['audit-events.json', 'manifest.json']);
  });
});
