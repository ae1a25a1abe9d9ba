import type { FaceCrop } from './face-crops.js';
import type { Face } from './faces.js';
import type { GeometryResult } from './geometry.js';
import { ImageRejected } from './rejected.js';
import type { ImageService } from '../ports.js';

/**
 * The images port over HTTP: what the Worker uses to reach the image service (image-service.ts)
 * through a service binding. One POST per call, the image as the body; an image the service
 * refuses comes back as 422 `image_rejected` and is thrown here as the same `ImageRejected`.
 */
export type Fetcher = (request: Request) => Promise<Response>;

export const IMAGE_SERVICE_ROUTES = ['analyse', 'fingerprints', 'probe', 'derive', 'crop-faces', 'match-geometry'] as const;
export type ImageServiceRoute = (typeof IMAGE_SERVICE_ROUTES)[number];

const fromBase64 = (text: string) => Buffer.from(text, 'base64');

export function httpImageService(fetcher: Fetcher): ImageService {
  async function call(route: ImageServiceRoute, body: Buffer | string, type: string): Promise<Response> {
    const response = await fetcher(
      new Request(`https://image-service/v1/${route}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: typeof body === 'string' ? body : body.slice(),
      }),
    );
    if (response.ok) return response;
    const answer = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    const message = answer?.error?.message ?? `the image service answered HTTP ${response.status}`;
    if (answer?.error?.code === 'image_rejected') throw new ImageRejected(message);
    throw new Error(`image service: ${message}`);
  }
  const json = async <T>(route: ImageServiceRoute, bytes: Buffer): Promise<T> => (await call(route, bytes, 'application/octet-stream')).json() as Promise<T>;

  return {
    async analyse(bytes) {
      const answer = await json<{ fingerprints: never; detections: never; thumbnail: { ok: true; value: string } | { ok: false; error: string } }>(
        'analyse',
        bytes,
      );
      return { ...answer, thumbnail: answer.thumbnail.ok ? { ok: true, value: fromBase64(answer.thumbnail.value) } : answer.thumbnail };
    },
    fingerprints: (bytes) => json('fingerprints', bytes),
    probe: (bytes) => json('probe', bytes),
    async derive(bytes) {
      const response = await call('derive', bytes, 'application/octet-stream');
      const format = response.headers.get('x-image-format') === 'png' ? 'png' : 'jpeg';
      return {
        bytes: Buffer.from(await response.arrayBuffer()),
        format,
        width: Number(response.headers.get('x-image-width')),
        height: Number(response.headers.get('x-image-height')),
      };
    },
    async cropFaces(bytes, faces: Face[]) {
      const response = await call('crop-faces', JSON.stringify({ image: bytes.toString('base64'), faces }), 'application/json');
      const crops = (await response.json()) as ({ face: Face; ok: true; bytes: string } | { face: Face; ok: false; error: string })[];
      return crops.map((c): FaceCrop => (c.ok ? { ...c, bytes: fromBase64(c.bytes) } : c));
    },
    async matchGeometry(query, reference, edit) {
      const [queryBytes, referenceBytes] = await Promise.all([query.bytes(), reference.bytes()]);
      const response = await call(
        'match-geometry',
        JSON.stringify({ query: queryBytes.toString('base64'), reference: referenceBytes.toString('base64'), edit }),
        'application/json',
      );
      return (await response.json()) as GeometryResult;
    },
    close: async () => undefined,
  };
}
