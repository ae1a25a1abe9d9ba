import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useFakeProviders } from '../helpers/fake-world.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath } from '../helpers/fixtures.js';

/**
 * The rights fields of a submitted file are local evidence: they never reach a provider (the derived
 * copy has none of them, and no query is made from them) and the language model sees them only as
 * the stored evidence item it may cite. Every outbound request is recorded by the fakes.
 */
const MARKERS = {
  artist: 'Artist Zq7 Vlm',
  copyright: 'Holder Kx9 Press',
  xmpCreator: '저작자마커가나',
  xmpRights: '권리문구마커다라',
  credit: 'Credit Mk4 Agency',
  webStatement: 'https://rights.example/ws-83jd',
  byline: 'Byline Qw3 Photo',
};

function app13(datasets: [number, string][]): Buffer {
  const iim = Buffer.concat(
    [[1, 90, '\x1b%G'] as const, ...datasets.map(([d, v]) => [2, d, v] as const)].map(([record, dataset, value]) => {
      const data = Buffer.from(value, record === 1 ? 'latin1' : 'utf8');
      const head = Buffer.from([0x1c, record, dataset, 0, 0]);
      head.writeUInt16BE(data.length, 3);
      return Buffer.concat([head, data]);
    }),
  );
  const resource = Buffer.alloc(12);
  resource.write('8BIM', 0, 'latin1');
  resource.writeUInt16BE(0x0404, 4);
  resource.writeUInt32BE(iim.length, 8);
  const payload = Buffer.concat([Buffer.from('Photoshop 3.0\0', 'latin1'), resource, iim, Buffer.alloc(iim.length & 1)]);
  const head = Buffer.from([0xff, 0xed, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

async function imageWithRights(): Promise<Buffer> {
  const xmp =
    `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" ` +
    `xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" ` +
    `photoshop:Credit="${MARKERS.credit}"><dc:creator><rdf:Seq><rdf:li>${MARKERS.xmpCreator}</rdf:li></rdf:Seq></dc:creator>` +
    `<dc:rights><rdf:Alt><rdf:li xml:lang="x-default">${MARKERS.xmpRights}</rdf:li></rdf:Alt></dc:rights>` +
    `<xmpRights:WebStatement>${MARKERS.webStatement}</xmpRights:WebStatement></rdf:Description></rdf:RDF></x:xmpmeta>`;
  const jpeg = await sharp(fixturePath('rocket.jpg'))
    .withExif({ IFD0: { Artist: MARKERS.artist, Copyright: MARKERS.copyright } })
    .withXmp(xmp)
    .jpeg()
    .toBuffer();
  return Buffer.concat([jpeg.subarray(0, 2), app13([[80, MARKERS.byline]]), jpeg.subarray(2)]);
}

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

beforeEach(() => {
  fakes.web.addPage('/article', '<html><body>article</body></html>');
  fakes.vision.detection = {
    pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: 'Rocket launch gallery' }],
    webEntities: [{ description: 'Rocket', score: 0.7 }],
  };
  // The model cites every id it was given.
  fakes.llm.answer = (prompt) => [...prompt.matchAll(/"id":"(ev_[a-z0-9]+)"/g)].map((m) => `근거가 있습니다 [${m[1]}].`).join(' ');
});
afterEach(async () => env?.dispose());

async function run(entries: { id: string; file: string; submitter?: string }[], files: Record<string, Buffer>) {
  env = await createTestEnv(fakes.settings);
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(env.paths.imagesDir, name), bytes);
  writeFileSync(
    env.paths.registryFile,
    JSON.stringify(
      entries.map((e) => ({
        id: e.id,
        title: `Title ${e.id}`,
        file: e.file,
        width: 1,
        height: 1,
        submitted_at: '2026-11-20 10:00',
        ...(e.submitter ? { submitter: e.submitter } : {}),
      })),
    ),
  );
  const report = await (await env.call('POST', '/api/submissions/reload')).json();
  expect(report.rejected).toEqual([]);
  await env.jobs.drain();
}

const review = async (id: string) =>
  (await env.call('GET', `/api/submissions/${id}/review`)).json() as Promise<{
    submission: { risk: { score: number; level: string; signals: { code: string; label: string; weight: number; evidence_ids: string[] }[] } };
    evidence: Evidence[];
    groups: { key: string; label: string; evidence_ids: string[] }[];
  }>;

describe('rights metadata of the submitted file', () => {
  it('is stored as local evidence in its own group, with a medium-risk signal when the submitter is someone else', async () => {
    await run([{ id: 'SUB-1', file: 'images/rights.jpg', submitter: 'Some Other Person' }], { 'rights.jpg': await imageWithRights() });
    const answer = await review('SUB-1');
    const rights = answer.evidence.filter((e) => e.group === 'rights');
    expect(rights).toHaveLength(1);
    expect(rights[0]).toMatchObject({ source: 'file_metadata', kind: 'rights_metadata_mismatch', title: '파일 권리 표기', counts_toward_score: true });
    expect(rights[0].text).toBe(
      `저작자: ${MARKERS.artist}; ${MARKERS.byline}; ${MARKERS.xmpCreator}\n저작권: ${MARKERS.copyright}; ${MARKERS.xmpRights}\n크레디트: ${MARKERS.credit}\n권리 안내 주소: ${MARKERS.webStatement}`,
    );
    expect(answer.groups.find((g) => g.key === 'rights')).toEqual({ key: 'rights', label: '권리 메타데이터', evidence_ids: [rights[0].id] });
    const signal = answer.submission.risk.signals.find((s) => s.code === 'rights_metadata_mismatch');
    expect(signal).toEqual({ code: 'rights_metadata_mismatch', label: '파일 권리 표기 불일치', weight: 30, evidence_ids: [rights[0].id] });
    // The mismatch with the web's related pages (10) stays medium.
    expect(answer.submission.risk).toMatchObject({ score: 40, level: 'medium' });
  });

  it('never reaches a provider, and reaches the language model only as the stored evidence item', async () => {
    await run([{ id: 'SUB-1', file: 'images/rights.jpg', submitter: 'Some Other Person' }], { 'rights.jpg': await imageWithRights() });
    const outbound = [fakes.vision, fakes.regional, fakes.search, fakes.web].flatMap((f) => f.requests);
    expect(fakes.vision.requests.length).toBeGreaterThan(0);
    expect(fakes.regional.requests.length + fakes.search.requests.length).toBeGreaterThan(0);
    for (const r of outbound) {
      const seen = `${r.path} ${JSON.stringify(r.query)} ${JSON.stringify(r.headers)} ${r.body.toString('utf8')} ${r.body.toString('latin1')}`;
      for (const marker of Object.values(MARKERS)) expect(seen).not.toContain(marker);
    }
    const sent = fakes.vision.sentImages();
    expect(sent.length).toBeGreaterThan(0);
    for (const image of sent) {
      const meta = await sharp(image).metadata();
      expect([meta.exif, meta.iptc, meta.xmp]).toEqual([undefined, undefined, undefined]);
      for (const marker of Object.values(MARKERS)) expect(image.includes(Buffer.from(marker))).toBe(false);
    }

    const rightsId = (await review('SUB-1')).evidence.find((e) => e.group === 'rights')!.id;
    const [prompt] = fakes.llm.prompts();
    const lines = prompt.split('\n');
    const carrying = lines.filter((line) => Object.values(MARKERS).some((m) => line.includes(m)));
    expect(carrying).toHaveLength(1);
    expect(JSON.parse(carrying[0])).toMatchObject({ id: rightsId, source: 'file_metadata', kind: 'rights_metadata_mismatch' });
    for (const marker of Object.values(MARKERS)) expect(carrying[0]).toContain(marker);
    // Cited like any other evidence.
    const summary = (await review('SUB-1')).evidence.find((e) => e.source === 'local_llm');
    expect(summary?.source_evidence_ids).toContain(rightsId);
  });

  it('gives no signal when the submitter is named in the file, and no rights evidence for a file with none', async () => {
    await run(
      [
        { id: 'OWN', file: 'images/own.jpg', submitter: 'holder kx9 press' },
        { id: 'PLAIN', file: 'images/plain.jpg' },
      ],
      { 'own.jpg': await imageWithRights(), 'plain.jpg': await sharp(fixturePath('camera.png')).jpeg().toBuffer() },
    );
    const own = await review('OWN');
    expect(own.evidence.filter((e) => e.group === 'rights').map((e) => e.kind)).toEqual(['rights_metadata']);
    expect(own.submission.risk.signals.map((s) => s.code)).not.toContain('rights_metadata_mismatch');
    const plain = await review('PLAIN');
    expect(plain.evidence.filter((e) => e.group === 'rights' || e.source === 'file_metadata')).toEqual([]);
    expect(plain.groups.map((g) => g.key)).not.toContain('rights');
  });

  it('follows a new submitter in the registry without a new analysis, and refuses one over 200 characters', async () => {
    const entry = (submitter: string) => [
      { id: 'SUB-1', title: 'Title SUB-1', file: 'images/rights.jpg', width: 1, height: 1, submitted_at: '2026-11-20 10:00', submitter },
    ];
    await run([{ id: 'SUB-1', file: 'images/rights.jpg', submitter: 'Some Other Person' }], { 'rights.jpg': await imageWithRights() });
    const before = (await review('SUB-1')).evidence.find((e) => e.group === 'rights')!;
    expect(before.kind).toBe('rights_metadata_mismatch');

    writeFileSync(env.paths.registryFile, JSON.stringify(entry(MARKERS.artist.toUpperCase())));
    const report = await (await env.call('POST', '/api/submissions/reload')).json();
    expect(report).toMatchObject({ updated: ['SUB-1'], queued_jobs: 0, rejected: [] });
    const after = await review('SUB-1');
    expect(after.evidence.filter((e) => e.group === 'rights').map((e) => e.kind)).toEqual(['rights_metadata']);
    expect(after.submission.risk).toMatchObject({ score: 10, level: 'low' });
    expect(after.submission.risk.signals.map((s) => s.code)).toEqual(['web_related']);

    writeFileSync(env.paths.registryFile, JSON.stringify(entry('x'.repeat(201))));
    const refused = await (await env.call('POST', '/api/submissions/reload')).json();
    expect(refused.rejected).toEqual([{ file: 'images/rights.jpg', id: 'SUB-1', reason: expect.stringContaining('submitter') }]);
    // The stored record and its evidence are kept.
    expect((await review('SUB-1')).evidence.filter((e) => e.group === 'rights').map((e) => e.kind)).toEqual(['rights_metadata']);
  });
});
