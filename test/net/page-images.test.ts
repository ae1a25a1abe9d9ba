import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { downloadSettings, type DownloadSettings } from '../../lib/net/download.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { extractPageImages, plainText } from '../../lib/net/html.js';
import { findPageImages } from '../../lib/net/page-images.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
const open: DownloadSettings = downloadSettings(buildConfig({ SVC_ALLOW_PRIVATE_DOWNLOADS: 'true' }).config, nodeEgress);
const guarded: DownloadSettings = downloadSettings(buildConfig({}).config, nodeEgress);

const PAGE = `<!doctype html>
<html><head>
  <title>Launch</title>
  <meta name="twitter:image" content="/img/twitter.jpg">
  <meta property="og:image" content="https://cdn.example.org/og.jpg">
  <script>var x = '<img src="/img/in-script.jpg">';</script>
</head><body>
  <img src="img/first.jpg" alt="first">
  <IMG SRC="https://cdn.example.org/og.jpg#top">
  <img src="javascript:alert(1)"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
  <img alt="no source">
  <img src="//other.example.org/second.png">
</body></html>`;

describe('page image candidates', () => {
  it('lists og:image, then twitter:image, then img src, resolved, http(s) only, each once', () => {
    expect(extractPageImages(PAGE, 'https://news.example.org/a/page.html', 10)).toEqual([
      'https://cdn.example.org/og.jpg',
      'https://news.example.org/img/twitter.jpg',
      'https://news.example.org/a/img/first.jpg',
      'https://other.example.org/second.png',
    ]);
  });

  it('stops at the limit', () => {
    expect(extractPageImages(PAGE, 'https://news.example.org/a/page.html', 2)).toEqual([
      'https://cdn.example.org/og.jpg',
      'https://news.example.org/img/twitter.jpg',
    ]);
  });

  it('resolves against <base href> when the page has one', () => {
    const html = '<html><head><base href="https://static.example.org/assets/"></head><body><img src="a.png"></body></html>';
    expect(extractPageImages(html, 'https://news.example.org/page', 5)).toEqual(['https://static.example.org/assets/a.png']);
  });

  it('copes with broken markup', () => {
    const html = '<html><body><div><img src="/x.png"<p>unclosed <img src=/y.png></body>';
    expect(extractPageImages(html, 'https://news.example.org/', 5)).toContain('https://news.example.org/y.png');
  });

  it('reads plain text out of tagged titles', () => {
    expect(plainText('<b>Saturn&nbsp;V</b>   &amp;\n <i>Apollo</i><script>x()</script>')).toBe('Saturn V & Apollo');
  });
});

describe('fetching a result page', () => {
  it('fetches the page under the download rules and resolves candidates against where it ended up', async () => {
    fakes.web.addPage('/articles/launch', PAGE);
    fakes.web.addRedirect('/short', '/articles/launch');
    const result = await findPageImages(fakes.web.urlFor('/short'), open, 3);
    expect(result).toEqual({
      ok: true,
      pageUrl: fakes.web.urlFor('/articles/launch'),
      candidates: ['https://cdn.example.org/og.jpg', fakes.web.urlFor('/img/twitter.jpg'), fakes.web.urlFor('/articles/img/first.jpg')],
    });
  });

  it('decodes the page in the charset its server declares', async () => {
    // "/사진.jpg" written in EUC-KR, the legacy Korean encoding many regional pages still use.
    const eucKr = Buffer.concat([Buffer.from('<html><body><img src="/'), Buffer.from([0xbb, 0xe7, 0xc1, 0xf8]), Buffer.from('.jpg"></body></html>')]);
    fakes.web.route('/kr', { headers: { 'content-type': 'text/html; charset=EUC-KR' }, body: eucKr });
    const result = await findPageImages(fakes.web.urlFor('/kr'), open, 3);
    expect(result.ok && result.candidates).toEqual([fakes.web.urlFor(`/${encodeURIComponent('사진')}.jpg`)]);
  });

  it('refuses a page that is not HTML', async () => {
    fakes.web.route('/data.json', { json: { og: 'image' } });
    const result = await findPageImages(fakes.web.urlFor('/data.json'), open, 3);
    expect(result).toMatchObject({ ok: false, error: { code: 'not_html' } });
  });

  it('refuses a page larger than the download limit', async () => {
    fakes.web.addPage('/huge', `<html><body>${'<p>filler</p>'.repeat(5000)}</body></html>`);
    const result = await findPageImages(fakes.web.urlFor('/huge'), { ...open, maxBytes: 4096 }, 3);
    expect(result).toMatchObject({ ok: false, error: { code: 'too_large' } });
  });

  it('refuses a page on a private address when private downloads are off', async () => {
    fakes.web.addPage('/articles/launch', PAGE);
    const result = await findPageImages(fakes.web.urlFor('/articles/launch'), guarded, 3);
    expect(result).toMatchObject({ ok: false, error: { code: 'blocked_address' } });
    expect(fakes.web.requests).toHaveLength(0);
  });
});
