import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createServerAdapter } from '@whatwg-node/server';
import { z } from 'zod';
import type { Config } from './lib/config.js';
import { loadConfig } from './lib/config-file.js';
import { createLogger } from './lib/log.js';
import { ImageRejected } from './lib/images/rejected.js';
import { IMAGE_SERVICE_ROUTES, type ImageServiceRoute } from './lib/images/http-service.js';
import { localImageService } from './lib/images/local-service.js';
import { sourceOf } from './lib/images/source.js';
import type { ImageService, Logger } from './lib/ports.js';

/**
 * The image service: the images port (sharp, the JPEG reader, the face model) behind a small HTTP
 * API, for the Worker, which reaches it through a service binding (in production a container; locally
 * this process). POST /v1/<analyse|fingerprints|probe|derive|crop-faces|match-geometry> with the image as the body.
 * It keeps no state and stores nothing.
 */

// The largest image the service takes: well above any submission the console accepts.
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

const encodedImage = z.string().max(Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 4);
/** `edit`: the region hashes' name for how the query relates to the reference (`hflip+crop`: a few words). */
const GeometryRequest = z.object({ query: encodedImage, reference: encodedImage, edit: z.string().max(40).optional() });
const CropRequest = z.object({
  image: encodedImage,
  faces: z.array(z.object({ box: z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() }), score: z.number() })).max(100),
});

/** A JSON request body as the schema reads it; null when it is not JSON or not that shape (a 400). */
function jsonBody<T>(schema: z.ZodType<T>, body: Buffer): T | null {
  try {
    return schema.parse(JSON.parse(body.toString('utf8')));
  } catch {
    return null;
  }
}

const errorAnswer = (status: number, code: string, message: string) => Response.json({ error: { code, message } }, { status });

export async function handleImageRequest(request: Request, images: ImageService, log?: Logger): Promise<Response> {
  const route = /^\/v1\/([a-z-]+)$/.exec(new URL(request.url).pathname)?.[1] as ImageServiceRoute | undefined;
  if (!route || !IMAGE_SERVICE_ROUTES.includes(route)) return errorAnswer(404, 'not_found', 'no such image service route');
  if (request.method !== 'POST') return errorAnswer(405, 'method_not_allowed', 'POST only');
  const declared = Number(request.headers.get('content-length'));
  if (declared > MAX_IMAGE_BYTES * 2) return errorAnswer(413, 'too_large', 'the request is too large');
  const body = Buffer.from(await request.arrayBuffer());
  if (body.length > MAX_IMAGE_BYTES * 2) return errorAnswer(413, 'too_large', 'the request is too large');
  try {
    switch (route) {
      case 'analyse': {
        const { thumbnail, ...rest } = await images.analyse(body);
        return Response.json({ ...rest, thumbnail: thumbnail.ok ? { ok: true, value: thumbnail.value.toString('base64') } : thumbnail });
      }
      case 'fingerprints':
        return Response.json(await images.fingerprints(body));
      case 'probe':
        return Response.json(await images.probe(body));
      case 'derive': {
        const derived = await images.derive(body);
        return new Response(derived.bytes.slice(), {
          headers: {
            'content-type': `image/${derived.format}`,
            'x-image-format': derived.format,
            'x-image-width': String(derived.width),
            'x-image-height': String(derived.height),
          },
        });
      }
      case 'crop-faces': {
        const parsed = jsonBody(CropRequest, body);
        if (!parsed) return errorAnswer(400, 'invalid_request', 'expected {image: base64, faces: [{box, score}]}');
        const crops = await images.cropFaces(Buffer.from(parsed.image, 'base64'), parsed.faces);
        return Response.json(crops.map((c) => (c.ok ? { ...c, bytes: c.bytes.toString('base64') } : c)));
      }
      case 'match-geometry': {
        const parsed = jsonBody(GeometryRequest, body);
        if (!parsed) return errorAnswer(400, 'invalid_request', 'expected {query: base64, reference: base64}');
        // Named here by the bytes received: what the service keeps is found by its true content.
        const [query, reference] = [sourceOf(Buffer.from(parsed.query, 'base64')), sourceOf(Buffer.from(parsed.reference, 'base64'))];
        return Response.json(await images.matchGeometry(query, reference, parsed.edit));
      }
    }
  } catch (error) {
    if (error instanceof ImageRejected) return errorAnswer(422, 'image_rejected', error.reason);
    // The caller learns only that it failed (its job tries again); the operator reads why here.
    log?.error('image request failed', { route, error: error instanceof Error ? error.message : String(error) });
    return errorAnswer(500, 'internal', 'the image could not be processed');
  }
}

export interface RunningImageService {
  url: string;
  stop(): Promise<void>;
}

/** Listens on SVC_HOST:port (0 picks a free one, for tests). */
export async function startImageService(config: Config, port: number): Promise<RunningImageService> {
  // As an entry, this is where the image service chooses its one adapter (docs/architecture.md#ports-and-adapters).
  const images = localImageService(config.SVC_MAX_IMAGE_PIXELS);
  const log = createLogger(config);
  const server: Server = createServer(createServerAdapter((request: Request) => handleImageRequest(request, images, log)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.SVC_HOST, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${config.SVC_HOST}:${bound}`,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await images.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { config } = loadConfig();
  const running = await startImageService(config, config.SVC_IMAGE_SERVICE_PORT);
  process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), level: 'info', message: 'image service listening', url: running.url })}\n`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void running.stop().then(() => process.exit(0)));
}
