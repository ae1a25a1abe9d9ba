import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { REGISTRY_KEY } from '../blobs/keys.js';
import type { BlobInfo, Env } from '../ports.js';
import { ID_PATTERN, signatureOf, type FileSignature } from './candidate.js';

// The registry (data/submissions/submissions.json): its entries' shape, its reading, and where an
// entry's file is among the folder's listing.

/** How the registry is named in a reload's refusals. */
export const REGISTRY_NAME = 'submissions.json';

export const RegistryEntry = z
  .object({
    id: z.string().regex(ID_PATTERN, 'letters, digits, dot, dash or underscore, at most 128, not starting with a dot or dash'),
    title: z.string().trim().min(1).max(500),
    /** Who submits and claims the rights: compared with the creator and copyright the file names. */
    submitter: z.string().trim().min(1).max(200).optional(),
    file: z.string().min(1).max(1024),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    submitted_at: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, 'expected YYYY-MM-DD HH:MM'),
  })
  .strict();

/**
 * Finds `images/<name>` among the files the listing found (`listed`, by name), or says why not. The
 * listing, not a lookup per entry, so that a registry of thousands costs no more store requests
 * than the folder's listing.
 */
export function resolveRegistryFile(file: string, listed: ReadonlyMap<string, BlobInfo>): { key: string; signature: FileSignature } | { reason: string } {
  if (isAbsolute(file) || file.includes('\\') || file.includes('\0')) return { reason: 'file must be a relative path of the form images/<file_name>' };
  const parts = file.split('/');
  if (parts.length !== 2 || parts[0] !== 'images' || parts[1] === '' || parts[1] === '.' || parts[1] === '..') {
    return { reason: 'file leaves data/submissions/images/ (expected images/<file_name>)' };
  }
  const info = listed.get(parts[1]);
  if (!info) return { reason: 'file does not exist' };
  if (info.problem) return { reason: `file is ${info.problem} (data/submissions/images/)` };
  return { key: info.key, signature: signatureOf(info) };
}

type RegistryRead = { entries: unknown[] } | { error: string } | null;

export async function readRegistry(env: Env): Promise<RegistryRead> {
  const bytes = await env.blobs.get(REGISTRY_KEY).catch(() => null);
  if (!bytes) return null;
  const text = new TextDecoder().decode(bytes);
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return { error: `registry is not valid JSON (${error instanceof Error ? error.message : 'parse error'}); nothing was imported from it` };
  }
  if (!Array.isArray(data)) return { error: 'registry must be a JSON array of entries; nothing was imported from it' };
  return { entries: data };
}
