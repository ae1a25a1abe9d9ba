import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { iou, type FaceBox } from '../../lib/images/faces.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One person of a face-api demo photo, head and shoulders, cut out around one labelled face. */
export interface DemoPerson {
  /** The demo photo's file name, and the index of the face the crop is made around in its labels. */
  photo: string;
  face: number;
  bytes: Buffer;
  width: number;
  height: number;
  /** The face the crop is made around, then every other labelled face wholly inside the crop. */
  faces: FaceBox[];
  /** Labelled faces the crop cuts. */
  cut: FaceBox[];
}

/** test/fixtures/faces/labels.json: the fixture photos and the face-api demo photos, each with its labelled faces (paths from the repository's root). */
export function labelledFixtures(): { file: string; faces: FaceBox[] }[] {
  return JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/faces/labels.json'), 'utf8'));
}

/**
 * People of the face-api demo photos (test/fixtures/faces/labels.json; the photos come with the
 * face-api dev dependency), head and shoulders: each labelled face with a margin of about one face
 * width at the sides and two face heights below, as a person small in a picture shows. Shared by
 * the detector's tests and bench/faces.ts, whose pasted tuning set is made of them.
 */
export async function demoPeople(): Promise<DemoPerson[]> {
  const crops: DemoPerson[] = [];
  for (const image of labelledFixtures().filter((l) => l.file.includes('face-api'))) {
    const file = path.join(ROOT, image.file);
    if (!existsSync(file)) continue;
    const { width = 0, height = 0 } = await sharp(file).metadata();
    for (const [index, face] of image.faces.entries()) {
      const left = Math.max(0, Math.round(face.x - face.width * 0.9));
      const top = Math.max(0, Math.round(face.y - face.height * 0.4));
      const area = {
        x: left,
        y: top,
        width: Math.min(width, Math.round(face.x + face.width * 1.9)) - left,
        height: Math.min(height, Math.round(face.y + face.height * 2.6)) - top,
      };
      const shifted = (box: FaceBox) => ({ ...box, x: box.x - left, y: box.y - top });
      const within = (box: FaceBox) =>
        box.x >= area.x && box.y >= area.y && box.x + box.width <= area.x + area.width && box.y + box.height <= area.y + area.height;
      const others = image.faces.filter((other) => other !== face && iou(other, area) > 0);
      crops.push({
        photo: path.basename(file),
        face: index,
        bytes: await sharp(file).extract({ left, top, width: area.width, height: area.height }).toBuffer(),
        width: area.width,
        height: area.height,
        faces: [face, ...others.filter(within)].map(shifted),
        cut: others.filter((other) => !within(other)).map(shifted),
      });
    }
  }
  return crops;
}
