import { notFound } from '../lib/http/errors.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The console's own page: scripts from itself only; pictures may come from the web (evidence). */
const CONSOLE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' http: https: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** GET / and GET /<file>: the static console; names are single plain segments of static/. */
export async function handleConsole(request: Request, env: Env): Promise<Response> {
  const path = new URL(request.url).pathname;
  const name = path === '/' ? 'index.html' : path.slice(1);
  const ext = /\.[a-z]+$/.exec(name)?.[0] ?? '';
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.[a-z]+$/.test(name) || !TYPES[ext]) throw notFound(`no route for GET ${path}`);
  const body = await env.assets.get(name);
  if (!body) throw notFound(`no route for GET ${path}`);
  return new Response(body.slice(), { headers: { 'content-type': TYPES[ext], 'cache-control': 'no-cache', ...CONSOLE_HEADERS } });
}

/** The console's files, for every GET outside /api/ no route takes: the sign-in page too, so open to all; they hold no data. */
export const consoleRoute = route('get', '*', 'public', 'The console', { handler: handleConsole });
