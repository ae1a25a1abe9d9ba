import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { DEFAULT_MAX_PIXELS, probeImage } from '../../lib/images/decode.js';
import { downloadImage, downloadSettings, type ImageDownloadSettings } from '../../lib/net/download.js';
import { fetchEgress } from '../../lib/net/fetch-egress.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import type { Egress } from '../../lib/ports.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let png: Buffer;
let port: string;

beforeAll(async () => {
  port = new URL(fakes.web.url).port;
  png = await readFile(new URL('../fixtures/images/camera.png', import.meta.url));
});

/** The same rules over both egress adapters: node:http (the Node service) and fetch (the Worker). */
const adapters: [string, Egress][] = [
  ['node:http', nodeEgress],
  ['fetch', fetchEgress()],
];

describe.each(adapters)('over %s', (_adapter, egress) => {
  /** The fake web listens on loopback, so reaching it at all needs private downloads allowed. */
  const probe = (bytes: Buffer) => probeImage(bytes, DEFAULT_MAX_PIXELS);
  const open: ImageDownloadSettings = { ...downloadSettings(buildConfig({ SVC_ALLOW_PRIVATE_DOWNLOADS: 'true' }).config, egress), probe, timeoutMs: 3000 };
  const guarded: ImageDownloadSettings = { ...downloadSettings(buildConfig({}).config, egress), probe };

  describe('image downloads', () => {
    it('downloads an image and reports its real format and size', async () => {
      const url = fakes.web.addImage('/camera.png', png, 'application/octet-stream');
      const result = await downloadImage(url, open);
      expect(result).toMatchObject({ ok: true, url, format: 'png', width: 512, height: 512 });
      expect(result.ok && result.bytes.equals(png)).toBe(true);
    });

    it('follows up to three redirects, each to a checked address', async () => {
      fakes.web.addImage('/final.png', png);
      fakes.web.addRedirect('/r3', '/final.png');
      fakes.web.addRedirect('/r2', fakes.web.urlFor('/r3'), 301);
      fakes.web.addRedirect('/r1', '/r2', 307);
      const result = await downloadImage(fakes.web.urlFor('/r1'), open);
      expect(result).toMatchObject({ ok: true, url: fakes.web.urlFor('/final.png') });
      expect(fakes.web.requests.map((r) => r.path)).toEqual(['/r1', '/r2', '/r3', '/final.png']);
    });

    it('refuses a fourth redirect', async () => {
      fakes.web.addImage('/final.png', png);
      fakes.web.addRedirect('/r4', '/final.png');
      fakes.web.addRedirect('/r3', '/r4');
      fakes.web.addRedirect('/r2', '/r3');
      fakes.web.addRedirect('/r1', '/r2');
      const result = await downloadImage(fakes.web.urlFor('/r1'), open);
      expect(result).toMatchObject({ ok: false, error: { code: 'too_many_redirects' } });
      expect(fakes.web.requests.map((r) => r.path)).not.toContain('/final.png');
    });

    it('re-checks the scheme of a redirect target', async () => {
      fakes.web.addRedirect('/to-file', 'file:///etc/passwd');
      const result = await downloadImage(fakes.web.urlFor('/to-file'), open);
      expect(result).toMatchObject({ ok: false, error: { code: 'unsupported_scheme' } });
    });

    it.each(['file:///etc/passwd', 'ftp://files.example.org/a.png', 'data:image/png;base64,iVBORw0KGgo=', 'javascript:alert(1)', 'gopher://x.example.org/'])(
      'refuses the non-http URL %s',
      async (url) => {
        expect(await downloadImage(url, open)).toMatchObject({ ok: false, error: { code: 'unsupported_scheme' } });
      },
    );

    it('refuses text that is not a URL and URLs carrying credentials', async () => {
      expect(await downloadImage('not a url', open)).toMatchObject({ ok: false, error: { code: 'invalid_url' } });
      expect(await downloadImage(fakes.web.urlFor('/camera.png').replace('http://', 'http://user:pw@'), open)).toMatchObject({
        ok: false,
        error: { code: 'invalid_url' },
      });
    });

    it('refuses a body larger than the limit, declared or not', async () => {
      const small = { ...open, maxBytes: 10_000 };
      fakes.web.addImage('/big.png', png);
      fakes.web.route('/big-chunked.png', { chunked: true, headers: { 'content-type': 'image/png' }, body: png });
      expect(await downloadImage(fakes.web.urlFor('/big.png'), small)).toMatchObject({ ok: false, error: { code: 'too_large' } });
      expect(await downloadImage(fakes.web.urlFor('/big-chunked.png'), small)).toMatchObject({ ok: false, error: { code: 'too_large' } });
    });

    it('gives up on a body that trickles in past the time limit', async () => {
      fakes.web.route('/slow.png', { dripMs: 50, headers: { 'content-type': 'image/png' }, body: png.subarray(0, 2000) });
      const result = await downloadImage(fakes.web.urlFor('/slow.png'), { ...open, timeoutMs: 300 });
      expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    });

    it('gives up on a server that does not answer in time', async () => {
      fakes.web.route('/stalled.png', { delayMs: 2000, body: png });
      const result = await downloadImage(fakes.web.urlFor('/stalled.png'), { ...open, timeoutMs: 300 });
      expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    });

    it('refuses bytes that are not an image, whatever the content type says', async () => {
      fakes.web.route('/fake.png', { headers: { 'content-type': 'image/png' }, body: '<html><body>not an image</body></html>' });
      const result = await downloadImage(fakes.web.urlFor('/fake.png'), open);
      expect(result).toMatchObject({ ok: false, error: { code: 'not_an_image' } });
    });

    it('refuses an image with more pixels than allowed, saying why', async () => {
      fakes.web.addImage('/camera.png', png);
      const result = await downloadImage(fakes.web.urlFor('/camera.png'), { ...open, probe: (bytes: Buffer) => probeImage(bytes, 1000) });
      expect(result).toEqual({ ok: false, error: { code: 'not_an_image', message: expect.stringContaining('more than the limit') } });
    });

    it('reports an HTTP error status', async () => {
      const result = await downloadImage(fakes.web.urlFor('/missing.png'), open);
      expect(result).toMatchObject({ ok: false, error: { code: 'http_error', message: expect.stringContaining('404') } });
    });
  });

  describe('private addresses with private downloads off', () => {
    it.each([
      ['loopback', () => `http://127.0.0.1:${port}/camera.png`],
      ['another loopback address', () => `http://127.0.0.2:${port}/camera.png`],
      ['a private network address', () => `http://10.0.0.5:${port}/camera.png`],
      ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
      ['IPv6 loopback', () => `http://[::1]:${port}/camera.png`],
      ['IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${port}/camera.png`],
      ['a decimal loopback address', () => `http://2130706433:${port}/camera.png`],
      ['a name resolving to loopback', () => `http://localhost:${port}/camera.png`],
    ])('refuses %s without connecting', async (_name, url) => {
      fakes.web.addImage('/camera.png', png);
      const result = await downloadImage(url(), guarded);
      expect(result).toMatchObject({ ok: false, error: { code: 'blocked_address' } });
      expect(fakes.web.requests).toHaveLength(0);
    });

    it('lets the same loopback address through when private downloads are allowed', async () => {
      fakes.web.addImage('/camera.png', png);
      expect((await downloadImage(`http://localhost:${port}/camera.png`, open)).ok).toBe(true);
    });
  });
});
