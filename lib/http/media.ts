import { DERIVED_AREA, EVIDENCE_AREA, IMAGES_PREFIX, THUMBS_AREA } from '../blobs/keys.js';
import type { BlobStore } from '../ports.js';

/**
 * Untrusted media (CONTRACT.md section 6): `/media/images|evidence|derived|thumbs/<path>` only. Every
 * answer, refusals included, carries a sandboxing CSP and nosniff, so a stored SVG cannot run script.
 */
export const MEDIA_HEADERS = {
  'content-security-policy': "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox",
  'x-content-type-options': 'nosniff',
} as const;

/** Each media folder's place in blob storage. */
const FOLDERS = { images: IMAGES_PREFIX, evidence: EVIDENCE_AREA, derived: DERIVED_AREA, thumbs: THUMBS_AREA } as const;

/**
 * Maps the raw (still percent-encoded) path after `/media/` to a file inside its folder, or null.
 * Encoded separators, dots, backslashes and NUL are refused before decoding, so no decoded form
 * can smuggle a `..` or a second separator past the checks.
 */
export function mediaRelativePath(rawPath: string): { folder: keyof typeof FOLDERS; segments: string[] } | null {
  if (/%(2e|2f|5c|00)/i.test(rawPath) || rawPath.includes('\\') || rawPath.includes('\0')) return null;
  let decoded: string[];
  try {
    decoded = rawPath.split('/').map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
  const [folder, ...segments] = decoded;
  if (!(folder in FOLDERS) || segments.length === 0) return null;
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..' || s.includes('\0') || s.includes('\\') || s.includes('/')) return null;
  }
  return { folder: folder as keyof typeof FOLDERS, segments };
}

/** The blob key behind a media path, or null when the path is refused. */
export function mediaKey(rawPath: string): string | null {
  const rel = mediaRelativePath(rawPath);
  return rel ? `${FOLDERS[rel.folder]}${rel.segments.join('/')}` : null;
}

/** The stored bytes behind a media path (links that leave their folder are refused by the store). */
export async function readMediaBytes(blobs: BlobStore, rawPath: string): Promise<Buffer | null> {
  const key = mediaKey(rawPath);
  return key ? blobs.get(key).catch(() => null) : null;
}

/** The content type from the bytes themselves, never from the name. */
export function sniffImageType(head: Uint8Array): string | null {
  const b = Buffer.from(head);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (b.length >= 12 && b.subarray(4, 8).toString('latin1') === 'ftyp') {
    const brand = b.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return 'image/avif';
    if (/^(heic|heix|mif1|msf1)$/.test(brand)) return 'image/heif';
  }
  if (b.length >= 4 && (b.subarray(0, 4).equals(Buffer.from('II*\0', 'latin1')) || b.subarray(0, 4).equals(Buffer.from('MM\0*', 'latin1'))))
    return 'image/tiff';
  const text = b
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (text.startsWith('<') && /<svg[\s>]/i.test(text)) return 'image/svg+xml';
  return null;
}

/** A stored image with the content type of its real format; anything else is not media. */
export async function readMedia(blobs: BlobStore, rawPath: string): Promise<{ bytes: Buffer; contentType: string } | null> {
  const bytes = await readMediaBytes(blobs, rawPath);
  const contentType = bytes ? sniffImageType(bytes.subarray(0, 4096)) : null;
  return bytes && contentType ? { bytes, contentType } : null;
}
