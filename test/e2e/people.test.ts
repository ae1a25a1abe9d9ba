import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { waitForAnalysis } from './harness.js';
import { consoleSession } from './session.js';

/**
 * Person boxes on the review desk and the queue's "has people" filter (issue 27, item 3), with the
 * real detectors: the astronaut photo shows one person and one face, the rocket nobody (the people pass takes coffee.png's cup for a person).
 */
const SEED = { images: { 'astronaut.png': 'astronaut.png', 'rocket.jpg': 'rocket.jpg' } };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Detected {
  box: Box;
  score: number;
  face?: number | null;
}
interface Submission {
  id: string;
  width: number;
  height: number;
  faces: Detected[];
  people: Detected[];
}

describe('people on the review desk and in the queue', () => {
  const session = consoleSession();

  async function open(hash: string) {
    const service = await session.start({ seed: SEED });
    await service.api('POST', '/api/submissions/reload');
    await waitForAnalysis(service);
    const submission = async (id: string) => (await service.api('GET', `/api/submissions/${id}/review`)).submission as Submission;
    const astronaut = await submission('astronaut');
    const rocket = await submission('rocket');
    const opened = await session.open(service, hash);
    return { page: opened.page, errors: opened.errors, service, astronaut, rocket };
  }

  async function imageLoaded(page: Page) {
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.review-image');
      return !!img && img.complete && img.naturalWidth > 0;
    });
  }

  it('draws the person boxes in their own colour over the person, with a toggle of their own', async () => {
    const { page, errors, service, astronaut } = await open('#/review/astronaut');
    // What the detectors say, which the drawing below must follow.
    expect(astronaut.people).toHaveLength(1);
    expect(astronaut.faces).toHaveLength(1);
    expect(astronaut.people[0].face).toBe(0);
    await imageLoaded(page);

    const people = page.locator('.person-box');
    await expect(people.count()).resolves.toBe(astronaut.people.length);
    await expect(page.locator('.face-box').count()).resolves.toBe(astronaut.faces.length);
    await expect(people.first().locator('.person-label').textContent()).resolves.toMatch(/^인물 1 · 0\.\d\d · 얼굴 1$/);

    // In percent of the picture, as the API's box in pixels of the stored picture says.
    const person = astronaut.people[0].box;
    const style = await people
      .first()
      .evaluate((el: HTMLElement) => [el.style.left, el.style.top, el.style.width, el.style.height].map((v) => (v.endsWith('%') ? Number.parseFloat(v) : NaN)));
    const expected = [person.x / astronaut.width, person.y / astronaut.height, person.width / astronaut.width, person.height / astronaut.height].map(
      (v) => v * 100,
    );
    style.forEach((value, i) => expect(Math.abs(value - expected[i])).toBeLessThan(0.5));
    // And on the screen: over the person's part of the image.
    const image = (await page.locator('.review-image').boundingBox())!;
    const drawn = (await people.first().boundingBox())!;
    const scale = image.width / astronaut.width;
    expect(Math.abs(drawn.x - (image.x + person.x * scale))).toBeLessThan(3);
    expect(Math.abs(drawn.y - (image.y + person.y * scale))).toBeLessThan(3);
    expect(Math.abs(drawn.width - person.width * scale)).toBeLessThan(3);
    expect(Math.abs(drawn.height - person.height * scale)).toBeLessThan(3);
    // The face lies inside the person box on the screen too.
    const face = (await page.locator('.face-box').first().boundingBox())!;
    expect(face.x).toBeGreaterThanOrEqual(drawn.x - 1);
    expect(face.y).toBeGreaterThanOrEqual(drawn.y - 1);
    expect(face.x + face.width).toBeLessThanOrEqual(drawn.x + drawn.width + 1);
    expect(face.y + face.height).toBeLessThanOrEqual(drawn.y + drawn.height + 1);

    // A colour (and line) of their own, named in the caption beside the face boxes'.
    const look = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((el) => {
          const css = getComputedStyle(el);
          return `${css.borderTopColor} ${css.borderTopStyle}`;
        });
    expect(await look('.person-box')).not.toBe(await look('.face-box'));
    expect(await look('.legend-swatch.swatch-person')).toBe(await look('.person-box'));
    await expect(page.locator('label[for="toggle-people"]').textContent()).resolves.toContain('인물 영역 1개 표시 (person boxes)');
    await expect(page.locator('label[for="toggle-faces"]').textContent()).resolves.toContain('얼굴 영역 1개 표시 (face boxes)');

    // The two toggles are independent.
    await page.locator('#toggle-people').uncheck();
    await expect(people.first().isVisible()).resolves.toBe(false);
    await expect(page.locator('.face-box').first().isVisible()).resolves.toBe(true);
    await page.locator('#toggle-faces').uncheck();
    await expect(page.locator('.face-box').first().isVisible()).resolves.toBe(false);
    await page.locator('#toggle-people').check();
    await expect(people.first().isVisible()).resolves.toBe(true);
    await expect(page.locator('.face-box').first().isVisible()).resolves.toBe(false);
    await page.locator('#toggle-faces').check();
    await expect(page.locator('.face-box').first().isVisible()).resolves.toBe(true);

    // A picture with nobody in it says so, with no toggle and no box.
    await page.goto(`${service.url}/#/review/rocket`);
    await page.locator('h1.review-title', { hasText: 'rocket' }).waitFor();
    await imageLoaded(page);
    await expect(page.locator('.review-figure figcaption').textContent()).resolves.toContain('감지된 인물 없음 (no people)');
    await expect(page.locator('.review-figure figcaption').textContent()).resolves.toContain('감지된 얼굴 없음 (no faces)');
    await expect(page.locator('.person-box, .face-box, #toggle-people, #toggle-faces').count()).resolves.toBe(0);
    expect(errors).toEqual([]);
  });

  it('filters the queue to the submissions that show people, or nobody, and keeps the filter in the address', async () => {
    const { page, errors, service, astronaut, rocket } = await open('#/queue');
    expect(rocket.people).toEqual([]);
    expect(rocket.faces).toEqual([]);
    expect(astronaut.people.length).toBeGreaterThan(0);
    const shown = () => page.locator('.queue-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-submission-id')).sort());
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 2);

    await page.locator('#filter-people').selectOption({ label: '인물 있음 (has people)' });
    await page.waitForFunction(() => location.hash.includes('people=true') && document.querySelectorAll('.queue-row').length === 1);
    await expect(shown()).resolves.toEqual(['astronaut']);
    // The same answer as the API's, and the export takes the filter along.
    const api = (await service.api('GET', '/api/review-queue?people=true')).items.map((s: { id: string }) => s.id);
    expect(api).toEqual(['astronaut']);
    await expect(page.locator('#export-queue').getAttribute('href')).resolves.toContain('people=true');

    // A reload of the tab keeps the filter.
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 1);
    await expect(page.locator('#filter-people').inputValue()).resolves.toBe('true');
    await expect(shown()).resolves.toEqual(['astronaut']);

    await page.locator('#filter-people').selectOption('false');
    await page.waitForFunction(
      () => location.hash.includes('people=false') && document.querySelector('.queue-row')?.getAttribute('data-submission-id') === 'rocket',
    );
    await expect(shown()).resolves.toEqual(['rocket']);

    await page.locator('#filter-people').selectOption('');
    await page.waitForFunction(() => !location.hash.includes('people=') && document.querySelectorAll('.queue-row').length === 2);
    expect(errors).toEqual([]);
  });
});
