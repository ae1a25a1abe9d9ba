import { startFakeServer, type FakeServer, type Responder } from './server.js';

/** "The web": result images and HTML pages the service downloads, served from 127.0.0.1. */

export interface FakeWeb extends FakeServer {
  /** Absolute URL of a path on this server. */
  urlFor(path: string): string;
  /** Serve any scripted answer at a path (GET). */
  route(path: string, responder: Responder): void;
  addImage(path: string, bytes: Buffer, contentType?: string): string;
  addPage(path: string, html: string, contentType?: string): string;
  addRedirect(path: string, location: string, status?: number): string;
}

export async function startFakeWeb(): Promise<FakeWeb> {
  const routes = new Map<string, Responder>();

  const server = await startFakeServer(async (request) => {
    const responder = routes.get(request.path);
    if (!responder) return { status: 404, headers: { 'content-type': 'text/html' }, body: '<h1>Not Found</h1>' };
    return typeof responder === 'function' ? responder(request) : responder;
  });

  const urlFor = (path: string) => `${server.url}${path}`;
  const route = (path: string, responder: Responder) => {
    routes.set(path, responder);
    return urlFor(path);
  };

  return Object.assign(server, {
    urlFor,
    route: (path: string, responder: Responder) => void route(path, responder),
    addImage: (path: string, bytes: Buffer, contentType = 'image/png') => route(path, { headers: { 'content-type': contentType }, body: bytes }),
    addPage: (path: string, html: string, contentType = 'text/html; charset=utf-8') => route(path, { headers: { 'content-type': contentType }, body: html }),
    addRedirect: (path: string, location: string, status = 302) => route(path, { status, headers: { location } }),
  });
}
