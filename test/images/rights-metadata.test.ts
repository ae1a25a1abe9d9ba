import { deflateSync, inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  emptyRights,
  metadataBlocks,
  readExif,
  readIptc,
  readRightsMetadata,
  readXmp,
  rightsMismatch,
  rightsText,
  type RightsMetadata,
} from '../../lib/images/rights-metadata.js';

/** Test files: a small plain image, and the metadata blocks built by hand (sharp writes no IPTC, and EXIF only as ASCII). */
const utf8 = (s: string) => Buffer.from(s, 'utf8');

type Entry = { tag: number; type: number; bytes: Buffer };
/** A TIFF header and IFD0 holding the entries, values after the IFD. */
function tiff(entries: Entry[], order: 'II' | 'MM' = 'II'): Buffer {
  const le = order === 'II';
  const ifdSize = 2 + entries.length * 12 + 4;
  const values: Buffer[] = [];
  let valueAt = 8 + ifdSize;
  const ifd = Buffer.alloc(ifdSize);
  const u16 = (b: Buffer, v: number, at: number) => (le ? b.writeUInt16LE(v, at) : b.writeUInt16BE(v, at));
  const u32 = (b: Buffer, v: number, at: number) => (le ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at));
  u16(ifd, entries.length, 0);
  entries.forEach((e, i) => {
    const at = 2 + i * 12;
    u16(ifd, e.tag, at);
    u16(ifd, e.type, at + 2);
    u32(ifd, e.bytes.length, at + 4);
    if (e.bytes.length <= 4) e.bytes.copy(ifd, at + 8);
    else {
      u32(ifd, valueAt, at + 8);
      values.push(e.bytes);
      valueAt += e.bytes.length;
    }
  });
  const header = Buffer.alloc(8);
  header.write(order, 0, 'latin1');
  u16(header, 42, 2);
  u32(header, 8, 4);
  return Buffer.concat([header, ifd, ...values]);
}

const ascii = (tag: number, s: string): Entry => ({ tag, type: 2, bytes: Buffer.concat([utf8(s), Buffer.from([0])]) });

function iim(datasets: [number, number, Buffer][]): Buffer {
  return Buffer.concat(
    datasets.map(([record, dataset, data]) => {
      const head = Buffer.from([0x1c, record, dataset, 0, 0]);
      head.writeUInt16BE(data.length, 3);
      return Buffer.concat([head, data]);
    }),
  );
}

/** An APP13 payload: `Photoshop 3.0\0` and one 8BIM resource 0x0404 (empty name) holding the IIM. */
function photoshop(iimData: Buffer, before: Buffer[] = []): Buffer {
  const resource = (id: number, data: Buffer) => {
    const head = Buffer.alloc(12);
    head.write('8BIM', 0, 'latin1');
    head.writeUInt16BE(id, 4);
    head.writeUInt32BE(data.length, 8);
    return Buffer.concat([head, data, Buffer.alloc(data.length & 1)]);
  };
  return Buffer.concat([Buffer.from('Photoshop 3.0\0', 'latin1'), ...before.map((b) => resource(0x03ed, b)), resource(0x0404, iimData)]);
}

function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** The JPEG with segments put right after its SOI. */
const withSegments = (jpeg: Buffer, ...segments: Buffer[]) => Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);

const xmpPacket = (description: string) =>
  `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
  `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" ${description}</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;

const FULL_XMP = xmpPacket(
  `photoshop:Credit="연합뉴스 &amp; 제휴사" photoshop:Source="보도자료">` +
    `<dc:creator><rdf:Seq><rdf:li>김민지</rdf:li><rdf:li>Park Studio</rdf:li></rdf:Seq></dc:creator>` +
    `<dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 김민지. All rights reserved.</rdf:li><rdf:li xml:lang="ko">저작권 김민지</rdf:li></rdf:Alt></dc:rights>` +
    `<xmpRights:UsageTerms><rdf:Alt><rdf:li xml:lang="x-default">보도 목적 외 사용 금지</rdf:li></rdf:Alt></xmpRights:UsageTerms>` +
    `<xmpRights:WebStatement rdf:resource="https://example.org/rights"/>`,
);

const only = (rights: RightsMetadata) => Object.fromEntries(Object.entries(rights).filter(([, v]) => v.length > 0));

let plainJpeg: Buffer;
beforeAll(async () => {
  plainJpeg = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#5a8' } })
    .jpeg()
    .toBuffer();
});

describe('rights metadata of the submitted file', () => {
  it('finds the EXIF and XMP blocks of JPEG, PNG and WebP exactly as sharp reports them, and reads their fields', async () => {
    const base = sharp({ create: { width: 48, height: 32, channels: 3, background: '#5a8' } })
      .withExif({ IFD0: { Artist: 'Jane Roe', Copyright: 'Example Press' } })
      .withXmp(FULL_XMP);
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      const file = await base.clone()[format]().toBuffer();
      const metadata = await sharp(file).metadata();
      const blocks = metadataBlocks(file);
      expect(Buffer.from(blocks.exif!).equals(metadata.exif!), format).toBe(true);
      // libvips deflates a PNG's XMP (zTXt); the inflated packet is sharp's.
      const xmp = blocks.xmp ?? inflateSync(blocks.xmpDeflated!);
      expect(Buffer.from(xmp).equals(metadata.xmp!), format).toBe(true);
      expect(only(await readRightsMetadata(file)), format).toEqual({
        creator: ['Jane Roe', '김민지', 'Park Studio'],
        copyright: ['Example Press', '© 2026 김민지. All rights reserved.', '저작권 김민지'],
        credit: ['연합뉴스 & 제휴사'],
        source: ['보도자료'],
        usage_terms: ['보도 목적 외 사용 금지'],
        web_statement: ['https://example.org/rights'],
      });
    }
  });

  it('reads EXIF Artist and Copyright in both byte orders, Korean UTF-8 intact, every holder of a two-part copyright', () => {
    for (const order of ['II', 'MM'] as const) {
      const block = tiff(
        [
          { tag: 0x0112, type: 3, bytes: Buffer.from([0, 1, 0, 0]) },
          ascii(0x013b, '홍길동'),
          { tag: 0x8298, type: 2, bytes: utf8('사진가 홍길동\0편집 한빛출판\0') },
        ],
        order,
      );
      expect(only(readExif(block)), order).toEqual({ creator: ['홍길동'], copyright: ['사진가 홍길동', '편집 한빛출판'] });
      // With the APP1 prefix, as sharp gives it.
      expect(only(readExif(Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), block]))), order).toEqual({
        creator: ['홍길동'],
        copyright: ['사진가 홍길동', '편집 한빛출판'],
      });
    }
    // Short values sit inside the entry itself.
    expect(readExif(tiff([ascii(0x013b, 'Kim')])).creator).toEqual(['Kim']);
  });

  it('reads IPTC with the UTF-8 declaration (1:90), without it (UTF-8 or Latin-1), and as sharp reports the APP13 block', async () => {
    const declared = iim([
      [1, 90, Buffer.from([0x1b, 0x25, 0x47])],
      [2, 80, utf8('이서연')],
      [2, 116, utf8('© 이서연')],
      [2, 110, utf8('한빛 통신')],
      [2, 115, utf8('자체 촬영')],
    ]);
    const file = withSegments(plainJpeg, segment(0xed, photoshop(declared, [Buffer.from('xyz')])));
    expect(Buffer.from(metadataBlocks(file).iptc!).equals((await sharp(file).metadata()).iptc!)).toBe(true);
    expect(only(await readRightsMetadata(file))).toEqual({ creator: ['이서연'], copyright: ['© 이서연'], credit: ['한빛 통신'], source: ['자체 촬영'] });

    const undeclared = iim([
      [2, 80, utf8('박지훈')],
      [2, 116, Buffer.from([0xa9, 0x20, 0x4a, 0x6f, 0x73, 0xe9])],
    ]);
    expect(only(readIptc(undeclared))).toEqual({ creator: ['박지훈'], copyright: ['© José'] });
  });

  it('reads XMP values as element text, list items (Alt, Seq, Bag), attributes and rdf:resource, entities decoded', () => {
    const packet = xmpPacket(
      `xmpRights:WebStatement="https://rights.example/a?x=1&amp;y=2">` +
        `<dc:creator><rdf:Bag><rdf:li>A &lt;One&gt;</rdf:li><rdf:li>  B   Two </rdf:li></rdf:Bag></dc:creator>` +
        `<photoshop:Credit>최유나 &#xC0AC;진</photoshop:Credit>`,
    );
    expect(only(readXmp(utf8(packet)))).toEqual({
      creator: ['A <One>', 'B Two'],
      credit: ['최유나 사진'],
      web_statement: ['https://rights.example/a?x=1&y=2'],
    });
    expect(readXmp(utf8('<x:xmpmeta/>'))).toEqual(emptyRights());
  });

  it('gives no fields for a file that has none, and for formats it does not read', async () => {
    expect(await readRightsMetadata(plainJpeg)).toEqual(emptyRights());
    expect(await readRightsMetadata(Buffer.from('GIF89a'))).toEqual(emptyRights());
    expect(await readRightsMetadata(Buffer.alloc(0))).toEqual(emptyRights());
  });

  it('caps each value at 500 characters and each field at 10 values', () => {
    const items = Array.from({ length: 30 }, (_, i) => `<rdf:li>name ${i}</rdf:li>`).join('');
    const rights = readXmp(utf8(xmpPacket(`><dc:creator><rdf:Seq>${items}</rdf:Seq></dc:creator><dc:rights>${'가'.repeat(5000)}</dc:rights>`)));
    expect(rights.creator).toHaveLength(10);
    expect(rights.copyright[0]).toBe('가'.repeat(500));
    expect(readExif(tiff([ascii(0x013b, 'x'.repeat(100_000))])).creator[0]).toHaveLength(500);
  });
});

describe('hostile metadata gives the fields that parse, never a crash or a stall', () => {
  const quickly = async (fn: () => unknown) => {
    const started = performance.now();
    await fn();
    // Generous: each of these is a single linear pass over at most a few megabytes.
    expect(performance.now() - started).toBeLessThan(2000);
  };

  it('EXIF: truncated IFD, offsets past the end, huge counts, an IFD pointing at itself, a wrong type', async () => {
    const good = tiff([ascii(0x013b, 'Good Artist'), ascii(0x8298, 'Good Copyright Holder')]);
    // Truncated inside the second entry's value: the first still reads.
    expect(only(readExif(good.subarray(0, good.length - 5)))).toEqual({ creator: ['Good Artist'] });
    // IFD0 claims 65,535 entries in a short block.
    const many = Buffer.from(good);
    many.writeUInt16LE(0xffff, 8);
    expect(only(readExif(many))).toEqual({ creator: ['Good Artist'], copyright: ['Good Copyright Holder'] });
    // A count of 4 GB and an offset past the end.
    const huge = Buffer.from(good);
    huge.writeUInt32LE(0xffffffff, 8 + 2 + 4);
    huge.writeUInt32LE(0xfffffff0, 8 + 2 + 12 + 8);
    expect(readExif(huge)).toEqual(emptyRights());
    // IFD0 offset past the end, at the header, and a next-IFD link pointing at IFD0 itself.
    for (const offset of [0xffffff00, 0, 4]) {
      const bad = Buffer.from(good);
      bad.writeUInt32LE(offset, 4);
      expect(readExif(bad)).toEqual(emptyRights());
    }
    const loop = Buffer.from(good);
    loop.writeUInt32LE(8, 8 + 2 + 2 * 12);
    expect(readExif(loop).creator).toEqual(['Good Artist']);
    // Artist given as a SHORT is not text.
    expect(readExif(tiff([{ tag: 0x013b, type: 3, bytes: Buffer.from([1, 0, 2, 0]) }]))).toEqual(emptyRights());
    for (const n of [0, 1, 5, 7, 9]) expect(readExif(Buffer.from('II*\0\x08\0\0\0\x01'.slice(0, n), 'latin1'))).toEqual(emptyRights());
  });

  it('IPTC: a dataset longer than the block, an extended dataset, a resource larger than the block, garbage', () => {
    const good = iim([
      [2, 80, utf8('Alpha')],
      [2, 116, utf8('Beta Corp')],
    ]);
    expect(only(readIptc(good.subarray(0, good.length - 2)))).toEqual({ creator: ['Alpha'] });
    const extended = Buffer.concat([iim([[2, 80, utf8('Alpha')]]), Buffer.from([0x1c, 2, 116, 0x80, 4, 0xff, 0xff, 0xff, 0xff])]);
    expect(only(readIptc(extended))).toEqual({ creator: ['Alpha'] });
    const resource = photoshop(good);
    resource.writeUInt32BE(0x7fffffff, 14 + 8);
    expect(readIptc(resource)).toEqual(emptyRights());
    expect(readIptc(Buffer.from('Photoshop 3.0\x008BIM', 'latin1'))).toEqual(emptyRights());
    expect(readIptc(Buffer.from([0x1c, 2, 80]))).toEqual(emptyRights());
  });

  it('XMP: a 1 MB packet is read up to 256 KiB, 20,000 nested tags, unclosed tags and a megabyte of entities', async () => {
    const padding = `<rdf:li>${'x'.repeat(1000)}</rdf:li>`.repeat(1024);
    const packet = xmpPacket(`><dc:creator><rdf:Seq><rdf:li>Early Name</rdf:li>${padding}<rdf:li>Late Name</rdf:li></rdf:Seq></dc:creator>`);
    expect(packet.length).toBeGreaterThan(1_000_000);
    await quickly(() => expect(readXmp(utf8(packet)).creator).toEqual(expect.arrayContaining(['Early Name'])));
    expect(readXmp(utf8(packet)).creator).not.toContain('Late Name');

    // 20,000 deep is 140 KB, inside the 256 KiB read.
    const nested = `<dc:creator>${'<b>'.repeat(20_000)}Deep${'</b>'.repeat(20_000)}</dc:creator><dc:rights>After</dc:rights>`;
    await quickly(() => expect(only(readXmp(utf8(nested)))).toEqual({ creator: ['Deep'], copyright: ['After'] }));
    await quickly(() => readXmp(utf8(`<dc:creator>${'&amp;'.repeat(200_000)}`)));
    await quickly(() => readXmp(utf8(`<dc:creator ${'a="1" '.repeat(100_000)}>`)));
    expect(only(readXmp(utf8('<dc:rights><rdf:Alt><rdf:li>Unclosed')))).toEqual({});
  });

  it('containers: JPEG segments of bad length, a PNG chunk longer than the file, a deflate bomb, broken deflate, random bytes', async () => {
    const exif = segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff([ascii(0x013b, 'Before Damage')])]));
    expect((await readRightsMetadata(withSegments(plainJpeg, exif, Buffer.from([0xff, 0xe2, 0x00, 0x01])))).creator).toEqual(['Before Damage']);
    expect(await readRightsMetadata(withSegments(plainJpeg, Buffer.from([0xff, 0xe1, 0xff, 0xff, 0x45])))).toEqual(emptyRights());

    const chunk = (type: string, data: Buffer, length = data.length) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(length, 0);
      head.write(type, 4, 'latin1');
      return Buffer.concat([head, data, Buffer.alloc(4)]);
    };
    const png = (...chunks: Buffer[]) => Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), ...chunks]);
    expect(await readRightsMetadata(png(chunk('eXIf', tiff([ascii(0x013b, 'Anyone')]), 0x7fffffff)))).toEqual(emptyRights());

    // 16 MB of spaces deflate to 16 KB; at most 256 KiB is inflated, and the XMP after is not reached.
    const bomb = deflateSync(Buffer.concat([Buffer.alloc(16 * 1024 * 1024, 0x20), utf8('<dc:creator>Bomb</dc:creator>')]));
    await quickly(async () =>
      expect(await readRightsMetadata(png(chunk('zTXt', Buffer.concat([Buffer.from('XML:com.adobe.xmp\0\0', 'latin1'), bomb]))))).toEqual(emptyRights()),
    );
    const broken = deflateSync(utf8('<dc:creator>Whole Name</dc:creator>')).subarray(0, 20);
    await expect(readRightsMetadata(png(chunk('zTXt', Buffer.concat([Buffer.from('XML:com.adobe.xmp\0\0', 'latin1'), broken]))))).resolves.toBeDefined();

    // Random bytes behind every signature the reader knows.
    let seed = 7;
    const random = (n: number) => Buffer.from(Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff));
    const heads = [Buffer.from([0xff, 0xd8]), Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.from('RIFF\0\0\0\0WEBP', 'latin1')];
    for (let i = 0; i < 300; i++) {
      const file = Buffer.concat([heads[i % 3], random(1 + ((i * 37) % 4000))]);
      await expect(readRightsMetadata(file)).resolves.toBeDefined();
      for (const read of [readExif, readIptc, readXmp]) expect(() => read(random(1 + ((i * 53) % 3000)))).not.toThrow();
    }
  });
});

describe('the submitter against the fields', () => {
  const rights = (creator: string[], copyright: string[] = []): RightsMetadata => ({ ...emptyRights(), creator, copyright });

  it('matches case-insensitively with spaces and punctuation removed, in any creator or copyright value', () => {
    expect(rightsMismatch(rights(['Jane Q. Roe']), 'jane q roe')).toBe(false);
    expect(rightsMismatch(rights([], ['© 2026 Kim Min-ji, all rights reserved']), 'KIM MINJI')).toBe(false);
    expect(rightsMismatch(rights(['홍길동']), '홍 길동')).toBe(false);
  });

  it('is a mismatch when the holder is someone else or the submitter is absent', () => {
    expect(rightsMismatch(rights(['Jane Roe']), 'John Doe')).toBe(true);
    expect(rightsMismatch(rights([], ['© 연합뉴스']), '김민지')).toBe(true);
    expect(rightsMismatch(rights(['Jane Roe']), null)).toBe(true);
    expect(rightsMismatch(rights(['Jane Roe']), '...')).toBe(true);
  });

  it('is no mismatch when the file names no creator or copyright holder (credit or source alone)', () => {
    expect(rightsMismatch({ ...emptyRights(), credit: ['연합뉴스'], source: ['AP'] }, null)).toBe(false);
  });

  it('lists the fields found as labelled lines', () => {
    expect(rightsText({ ...emptyRights(), creator: ['A', 'B'], web_statement: ['https://x.example/'] })).toBe(
      '저작자: A; B\n권리 안내 주소: https://x.example/',
    );
  });
});
