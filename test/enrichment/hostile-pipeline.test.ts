import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MAX_LABEL_CHARS, MAX_TITLE_CHARS } from '../../lib/providers/fields.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { copyFixture } from '../helpers/fixtures.js';
import { useTestServer } from '../helpers/server.js';

const fakes = useFakeProviders();
const running = useTestServer(() => ({ settings: fakes.settings }));

const HOSTILE = 1 << 20;
const PADDING = 200;
/** The entries per list the service asks web detection for. */
const ASKED = 20;

beforeAll(() => {
  const { vision, llm, web } = fakes;
  // Every text of the answer is a megabyte of what once made the service quadratic.
  vision.detection = {
    pagesWithMatchingImages: [
      { url: web.urlFor('/a'), pageTitle: '{{'.repeat(HOSTILE / 2) },
      { url: web.urlFor('/b'), pageTitle: '<b>'.repeat(HOSTILE / 3) },
      { url: web.urlFor('/c'), pageTitle: 'Namsan tower at night' },
      // Far more pages and entities than the 20 asked for, each of which would become evidence.
      ...Array.from({ length: PADDING }, (_, i) => ({ url: web.urlFor(`/padding/${i}`), pageTitle: `{{ padding ${i} }}` })),
    ],
    webEntities: [
      { description: '${'.repeat(HOSTILE / 2), score: 0.9 },
      { description: '<%'.repeat(HOSTILE / 2), score: 0.8 },
      ...Array.from({ length: PADDING }, (_, i) => ({ entityId: '{{'.repeat(150), description: `<% padding ${i} %>`, score: 0.1 })),
    ],
    bestGuessLabels: [{ label: '{{\n'.repeat(HOSTILE / 3) }],
  };
  llm.answer = () => `${'['.repeat(HOSTILE)} no citation`;
});

const api = async (path: string, method = 'GET') => (await running.fetch(path, { method })).json();

it('/health keeps answering while enrichment reads a vision answer made of megabytes of hostile text', async () => {
  copyFixture('camera.png', join(running.dataDir, 'submissions', 'images'));
  const report = await api('/api/submissions/reload', 'POST');
  expect(report.imported).toEqual(['camera']);
  const waits: number[] = [];
  let status = '';
  for (let i = 0; i < 3000; i++) {
    const started = performance.now();
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    waits.push(performance.now() - started);
    status = (await api('/api/submissions/camera/review')).submission.enrichment_status;
    if (status === 'done' || status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(status).toBe('done');
  // The vision answer was received and read: its pages are evidence, with their titles cut.
  expect(fakes.vision.requests.length).toBe(1);
  expect(waits.length).toBeGreaterThan(3);
  // A quadratic read of one of these megabytes holds the process for minutes; a linear one for a few
  // milliseconds. The bound sits far from both so a loaded CI machine cannot trip it (100 ms did);
  // stall times as figures belong to the benchmarks (the queue load bench's loop monitor).
  expect(Math.max(...waits)).toBeLessThan(1000);
  const review = await api('/api/submissions/camera/review');
  const titles = review.evidence.map((e: { title: string | null }) => e.title ?? '');
  expect(titles).toContain('Namsan tower at night');
  expect(Math.max(...titles.map((t: string) => t.length))).toBeLessThanOrEqual(MAX_TITLE_CHARS);
  // Only the entries asked for became evidence, however many the answer held.
  const ofKind = (kind: string) => review.evidence.filter((e: { kind: string }) => e.kind === kind).length;
  expect(ofKind('page_with_matching_image')).toBe(ASKED);
  expect(ofKind('web_entity')).toBe(ASKED);
  // Only the specific, unbroken title became a search query; no placeholder text left the service.
  const queries = [...fakes.regional.requests, ...fakes.search.requests].map((r) => r.query.query ?? r.query.q ?? '');
  expect(queries.length).toBeGreaterThan(0);
  for (const query of queries) {
    expect(query).toMatch(/Namsan tower at night/);
    expect(query.length).toBeLessThanOrEqual(MAX_LABEL_CHARS);
  }
  // The model's answer cited nothing, so its summary is a failure record and not a claim.
  expect(review.evidence.some((e: { kind: string; group: string }) => e.group === 'failures')).toBe(true);
});
