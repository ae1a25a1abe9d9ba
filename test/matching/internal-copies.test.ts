import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath } from '../helpers/fixtures.js';
import { coverBox, turnedPale } from '../helpers/geometry-transforms.js';
import { internalLinks } from '../helpers/matching-set.js';
import { turnedOn } from '../helpers/small-turns.js';

/**
 * Issue 29 item 3 and the flat-picture regression, as an operator sees them: copies stored as
 * submissions are linked to their original by the comparison a reload queues (the similarity index
 * in the database, the pair rules, the geometric veto). Small turns on black, white and blurred
 * corners, both flips, crops between the crop windows' steps and to other shapes, a 10 % crop and a
 * 20 % black pad of a line drawing on white; and two
 * different pale photographs turned by the same angle on black stay apart. Runs on the SQLite file
 * and on D1 (vitest.d1-r2.config.ts).
 */

/** Outlined shapes on a white ground, reaching within 4-8 % of its edges, like OpenCV's pic1. */
const DRAWING = Buffer.from(
  `<svg width="640" height="480" xmlns="http://www.w3.org/2000/svg"><rect width="640" height="480" fill="white"/>
  <g fill="none" stroke="black" stroke-width="3">
    <rect x="26" y="30" width="230" height="150"/><circle cx="460" cy="130" r="95"/>
    <polygon points="40,440 200,250 330,445"/><ellipse cx="490" cy="360" rx="120" ry="70"/>
    <line x1="300" y1="40" x2="360" y2="220"/><rect x="360" y="250" width="60" height="60" transform="rotate(20 390 280)"/>
  </g></svg>`,
);

const jpeg = (image: Sharp) => image.jpeg({ quality: 90 }).toBuffer();

async function copies(): Promise<Record<string, Buffer>> {
  const photo = await sharp(fixturePath('chelsea.png')).png().toBuffer();
  const { width, height } = await sharp(photo).metadata();
  const drawing = await sharp(DRAWING).png().toBuffer();
  return {
    'chelsea-original': await jpeg(sharp(photo)),
    'chelsea-turn4black': await turnedOn(photo, 4, 'black'),
    'chelsea-turn7white': await turnedOn(photo, -7, 'white'),
    'chelsea-turn6blurred': await turnedOn(photo, 6, 'blurred'),
    'chelsea-hflip': await jpeg(sharp(photo).flop()),
    'chelsea-vflip': await jpeg(sharp(photo).flip()),
    // Between the crop windows' steps, and cover crops to a square and to 16:9 (decision 0061).
    'chelsea-crop7': await jpeg(sharp(photo).extract({ left: 34, top: 22, width: 383, height: 256 })),
    'chelsea-square': await jpeg(sharp(photo).extract(coverBox(width!, height!, 1))),
    'chelsea-banner': await jpeg(sharp(photo).extract(coverBox(width!, height!, 16 / 9))),
    // Brightened until its pHash is 0.81 similar: under the threshold, in the near band, no edit named.
    'chelsea-bright': await jpeg(sharp(photo).modulate({ brightness: 2.2 })),
    'drawing-original': await sharp(drawing).png().toBuffer(),
    'drawing-crop10': await jpeg(sharp(drawing).extract({ left: 64, top: 48, width: 512, height: 384 })),
    'drawing-pad20': await jpeg(sharp(drawing).extend({ left: 128, right: 128, top: 96, bottom: 96, background: '#000000' })),
    // The region hashes' known false match (decision 0012): the canvas, not the pictures, agrees.
    'coffee-pale': await turnedPale(fixturePath('coffee.png'), 0.25, 25),
    'rocket-pale': await turnedPale(fixturePath('rocket.jpg'), 0.25, 25),
  };
}

let env: TestEnv;
let links: string[];
beforeAll(async () => {
  const set = await copies();
  env = await createTestEnv();
  for (const [name, bytes] of Object.entries(set)) await env.blobs.put(`submissions/images/${name}.jpg`, bytes);
  expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ rejected: [] });
  expect(await env.jobs.drain('analyse')).toBe(Object.keys(set).length);
  links = await internalLinks(env.db, (id) => id);
}, 300_000);
afterAll(async () => {
  await env?.dispose();
});

/** The transforms a pair is linked by, seen from `mine`; empty when they are not linked. */
const linked = (mine: string, other: string) => links.filter((link) => link.startsWith(`${mine} > ${other}:`)).map((link) => link.split(': ')[1].split(' ')[0]);

describe('copies found among the stored submissions', () => {
  it.each([
    ['chelsea-turn4black', 'turned 4° on black'],
    ['chelsea-turn7white', 'turned 7° the other way on white'],
    ['chelsea-turn6blurred', 'turned 6° on a blurred copy of itself'],
    ['chelsea-hflip', 'mirrored'],
    ['chelsea-vflip', 'flipped upside down'],
    ['chelsea-crop7', 'cut by 7.5 % on every side'],
    ['chelsea-square', 'cut to a square'],
    ['chelsea-banner', 'cut to a 16:9 banner'],
    ['drawing-crop10', 'a line drawing cut by 10 % on every side'],
    ['drawing-pad20', 'a line drawing on a 20 % black pad'],
  ])('links %s (%s) to its original, on both sides', (copy) => {
    const original = `${copy.split('-')[0]}-original`;
    expect(linked(copy, original), links.join('\n')).not.toEqual([]);
    expect(linked(original, copy), links.join('\n')).not.toEqual([]);
  });

  it('names a straightened turn as a tilt, and a flip by its orientation', () => {
    expect(linked('chelsea-turn4black', 'chelsea-original')[0]).toMatch(/tilt|geometric/);
    expect(linked('chelsea-hflip', 'chelsea-original')).toEqual(['hflip']);
    expect(linked('chelsea-vflip', 'chelsea-original')).toEqual(['vflip']);
    for (const crop of ['chelsea-crop7', 'chelsea-square', 'chelsea-banner']) expect(linked(crop, 'chelsea-original'), crop).toEqual(['crop']);
  });

  it('links a copy brightened out of the pHash threshold as geometric, from its pixels alone', async () => {
    expect(linked('chelsea-bright', 'chelsea-original'), links.join('\n')).toEqual(['geometric']);
    expect(linked('chelsea-original', 'chelsea-bright')).toEqual(['geometric']);
    // No keypoint inliers: the pixels confirmed the same picture as it stands (decision 0075).
    const { results } = await env.db
      .prepare("SELECT match_inliers, match_region FROM evidence WHERE group_key = 'internal' AND submission_id = 'chelsea-bright'")
      .all<{ match_inliers: number | null; match_region: string }>();
    expect(results).toHaveLength(1);
    expect(results[0].match_inliers).toBeNull();
    expect(JSON.parse(results[0].match_region).submission.coverage).toBeCloseTo(1, 2);
  });

  it('links nothing across different pictures, the two pale photographs on the same turned canvas included', () => {
    for (const link of links) {
      const [mine, other] = link.split(': ')[0].split(' > ');
      expect(mine.split('-')[0], link).toBe(other.split('-')[0]);
    }
  });
});
