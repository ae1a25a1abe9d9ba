import { describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { addEvidence, type MatchRegion, type NewEvidence } from '../../lib/repo/evidence.js';
import { waitForAnalysis, waitForEnrichment } from './harness.js';
import { consoleSession } from './session.js';

type Corner = [number, number];

/** The cat photo (451 x 300) is the submission; the square astronaut stands in for the evidence image. */
const SEED = { images: { 'chelsea.png': 'chelsea.png', 'astronaut.png': 'astronaut.png' } };

/** A collage: all of the submission shows in 30 % of the evidence image; one corner lies outside it and is clamped. */
const COLLAGE: MatchRegion = {
  submission: {
    quad: [
      [0.05, 0.1],
      [0.95, 0.1],
      [0.95, 0.9],
      [0.05, 0.9],
    ],
    coverage: 0.72,
  },
  candidate: {
    quad: [
      [0.5, -0.2],
      [1.3, 0.5],
      [0.8, 1],
      [0.2, 0.6],
      [0.3, 0.2],
    ],
    coverage: 0.3,
  },
};
/** A crop: the other submission shows 41 % of this one. */
const CROP: MatchRegion = {
  submission: {
    quad: [
      [0.1, 0.1],
      [0.6, 0.1],
      [0.6, 0.7],
      [0.1, 0.7],
    ],
    coverage: 0.41,
  },
  candidate: {
    quad: [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 1],
    ],
    coverage: 0.95,
  },
};
/** Stored data gone wrong: a corner that is not a number, a side without its coverage. */
const MALFORMED = {
  submission: {
    quad: [
      [0.1, 'x'],
      [0.6, 0.1],
      [0.6, 0.7],
    ],
    coverage: 0.4,
  },
  candidate: {
    quad: [
      [0, 0],
      [1, 0],
      [1, 1],
    ],
  },
} as unknown as MatchRegion;

describe('matched regions on the review desk', () => {
  const session = consoleSession();

  /** The box the picture fills inside its element (the compare images are `object-fit: contain`). */
  async function pictureBox(img: Locator) {
    const box = (await img.boundingBox())!;
    const natural = await img.evaluate((el: HTMLImageElement) => [el.naturalWidth, el.naturalHeight]);
    const scale = Math.min(box.width / natural[0], box.height / natural[1]);
    const [width, height] = [natural[0] * scale, natural[1] * scale];
    return { x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, width, height };
  }

  /** The outline over the figure's image sits where the corners say, and has one point per corner. */
  async function expectOutline(figure: Locator, corners: Corner[]) {
    const polygon = figure.locator('svg.match-region[aria-label="일치 영역"] polygon');
    await polygon.waitFor();
    const points = (await polygon.getAttribute('points'))!.trim().split(/\s+/);
    expect(points).toHaveLength(corners.length);
    const picture = await pictureBox(figure.locator('img.compare-img'));
    const clamped = corners.map(([x, y]) => [Math.min(1, Math.max(0, x)), Math.min(1, Math.max(0, y))]);
    const xs = clamped.map(([x]) => picture.x + x * picture.width);
    const ys = clamped.map(([, y]) => picture.y + y * picture.height);
    const drawn = (await polygon.boundingBox())!;
    expect(Math.abs(drawn.x - Math.min(...xs))).toBeLessThan(1.5);
    expect(Math.abs(drawn.y - Math.min(...ys))).toBeLessThan(1.5);
    expect(Math.abs(drawn.x + drawn.width - Math.max(...xs))).toBeLessThan(1.5);
    expect(Math.abs(drawn.y + drawn.height - Math.max(...ys))).toBeLessThan(1.5);
    // The outline never takes the clicks meant for the card.
    await expect(figure.locator('svg.match-region').evaluate((svg) => getComputedStyle(svg).pointerEvents)).resolves.toBe('none');
  }

  it('outlines the matched region on both images and names the similarity that decided the match', async () => {
    const service = await session.start({ seed: SEED });
    await service.api('POST', '/api/submissions/reload');
    await waitForAnalysis(service);
    await waitForEnrichment(service, ['chelsea', 'astronaut']);
    const other = (await service.api('GET', '/api/submissions/astronaut/review')).submission;
    const shown = { local_media_path: other.file as string, matched: true } as const;
    const web = { source: 'regional', kind: 'image_result', group: 'web_match', ...shown } as const;
    const items: NewEvidence[] = [
      { ...web, title: '콜라주 속 사진', similarity: 0.41, match_transform: 'geometric', match_similarity: 0.87, match_inliers: 124, match_region: COLLAGE },
      { ...web, title: '반전된 사본', similarity: 0.62, match_transform: 'hflip', match_similarity: 0.96 },
      { ...web, title: '영역이 깨진 사본', similarity: 0.58, match_transform: 'crop', match_similarity: 0.93, match_inliers: 40, match_region: MALFORMED },
      {
        source: 'internal',
        kind: 'submission_match',
        group: 'internal',
        ...shown,
        title: 'astronaut',
        similarity: 0.52,
        match_transform: 'hflip+geometric',
        match_similarity: 0.81,
        match_inliers: 57,
        match_region: CROP,
        matched_submission_id: 'astronaut',
      },
    ];
    await addEvidence(service.server.env.db, 'chelsea', items, new Date().toISOString());

    const opened = await session.open(service, '#/review/chelsea');
    const { page } = opened;
    const card = (title: string) => page.locator('.evidence', { has: page.locator('.evidence-title', { hasText: new RegExp(`^${title}$`) }) });
    const figures = (c: Locator) => c.locator('.compare figure');

    // A collage: the outline covers the whole cat and a clipped five-corner part of the bigger picture.
    const collage = card('콜라주 속 사진');
    await collage.scrollIntoViewIfNeeded();
    await expectOutline(figures(collage).nth(0), COLLAGE.submission.quad);
    await expectOutline(figures(collage).nth(1), COLLAGE.candidate.quad);
    await expect(collage.locator('.deciding').textContent()).resolves.toBe('영역 일치 · 근거 이미지 면적의 30.0% · 특징점 124개 일치 · 영역 화소 일치도 87.0%');
    await expect(collage.locator('.similarity').textContent()).resolves.toBe('41.0%');
    await expect(collage.locator('.badge.matched').textContent()).resolves.toBe('일치 · 영역 일치');
    await expect(collage.locator('.badge.matched').getAttribute('title')).resolves.toBe('일치 방식: geometric');

    // A crop of this picture in the other submission, mirrored: the share is of the submitted image.
    const crop = card('astronaut');
    await crop.scrollIntoViewIfNeeded();
    await expectOutline(figures(crop).nth(0), CROP.submission.quad);
    await expectOutline(figures(crop).nth(1), CROP.candidate.quad);
    await expect(crop.locator('.deciding').textContent()).resolves.toBe(
      '좌우 반전 후 영역 일치 · 제출 이미지 면적의 41.0% · 특징점 57개 일치 · 영역 화소 일치도 81.0%',
    );
    await expect(crop.locator('.badge.matched').textContent()).resolves.toBe('일치 · 좌우 반전 · 영역 일치');

    // A mirrored copy: its similarity after the flip, and the plain pHash beside it; no region, no outline.
    const mirrored = card('반전된 사본');
    await mirrored.scrollIntoViewIfNeeded();
    await expect(mirrored.locator('.deciding').textContent()).resolves.toBe('좌우 반전 후 96.0%');
    await expect(mirrored.locator('.similarity').textContent()).resolves.toBe('62.0%');
    await expect(mirrored.locator('dt', { hasText: '유사도 (pHash)' }).count()).resolves.toBe(1);
    await expect(mirrored.locator('.badge.matched').textContent()).resolves.toBe('일치 · 좌우 반전');
    await expect(mirrored.locator('dd.mono').textContent()).resolves.toBe('hflip');
    await expect(mirrored.locator('svg.match-region').count()).resolves.toBe(0);

    // A malformed region draws nothing and breaks nothing: the card still says how it matched.
    const broken = card('영역이 깨진 사본');
    await broken.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('.compare img')].every((img) => img.complete && img.naturalWidth > 0));
    await expect(broken.locator('.compare img.compare-img').count()).resolves.toBe(2);
    await expect(broken.locator('svg.match-region').count()).resolves.toBe(0);
    await expect(broken.locator('.deciding').textContent()).resolves.toBe('잘라낸 부분 93.0% · 특징점 40개 일치');
    await expect(broken.locator('.similarity').textContent()).resolves.toBe('58.0%');
    expect(opened.errors).toEqual([]);
  });
});
