import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';

export const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'images');
export const FIXTURE_NAMES = ['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'] as const;

export function fixturePath(name: string): string {
  return join(FIXTURES, name);
}

export function copyFixture(name: string, dir: string, as = name): string {
  const target = join(dir, as);
  copyFileSync(fixturePath(name), target);
  return target;
}

/** The fixture re-encoded as a JPEG of the given quality: the same photo, other bytes. */
export async function reencoded(name: string, quality = 75): Promise<Buffer> {
  return sharp(fixturePath(name)).jpeg({ quality }).toBuffer();
}
