import { createHash } from 'node:crypto';
import type { ImageSource } from '../ports.js';

/** The SHA-256 of an image's bytes in hex: the name the images port keeps what it made of them under. */
export const contentHash = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Bytes in hand as an image source. */
export function sourceOf(bytes: Buffer): ImageSource {
  const sha256 = contentHash(bytes);
  return { sha256, bytes: async () => bytes };
}
