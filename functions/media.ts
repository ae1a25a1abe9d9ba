import { errorResponse, notFound } from '../lib/http/errors.js';
import { MEDIA_HEADERS, readMedia } from '../lib/http/media.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

function refuse(): Response {
  return errorResponse(notFound('no such media'), MEDIA_HEADERS);
}

/** GET /media/{path}: stored images only, from their real format, always sandboxed. */
export async function handleMedia(request: Request, env: Env): Promise<Response> {
  // The raw path, before any decoding: the checks must see encoded forms as sent.
  const raw = request.url.replace(/^[a-z]+:\/\/[^/]+/i, '').split(/[?#]/)[0];
  if (!raw.startsWith('/media/')) return refuse();
  const media = await readMedia(env.blobs, raw.slice('/media/'.length));
  if (!media) return refuse();
  return new Response(new Uint8Array(media.bytes), {
    headers: {
      'content-type': media.contentType,
      'content-length': String(media.bytes.length),
      'cache-control': 'private, max-age=300',
      ...MEDIA_HEADERS,
    },
  });
}

export const mediaRoute = route('get', '/media/*', 'operator', 'A stored image: submission, thumbnail, derived copy or downloaded evidence', {
  file: { types: ['application/octet-stream'], description: 'The stored file, with a restrictive Content-Security-Policy and nosniff' },
  handler: handleMedia,
});
