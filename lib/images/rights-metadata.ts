import { Tokenizer } from 'htmlparser2';

/**
 * The rights fields a submitted file states about itself (EXIF, IPTC IIM, XMP), read before the
 * derived copy drops them. Pure byte reading, no decoder: it runs wherever analysis runs (the Node
 * service and the Worker), and every read is bounded, since the file comes from outside. A damaged
 * or hostile block gives the fields that parse, or none; it never throws.
 */
/** Each rights field with the label its evidence line gives it, in the order the lines are written. */
const RIGHTS_LABELS = {
  creator: '저작자',
  copyright: '저작권',
  credit: '크레디트',
  source: '출처',
  usage_terms: '이용 조건',
  web_statement: '권리 안내 주소',
} as const;
export type RightsField = keyof typeof RIGHTS_LABELS;
export type RightsMetadata = Record<RightsField, string[]>;
const RIGHTS_FIELDS = Object.keys(RIGHTS_LABELS) as RightsField[];

const MAX_VALUE_CHARS = 500;
const MAX_VALUES_PER_FIELD = 10;
const MAX_XMP_BYTES = 256 * 1024;
// A TIFF string longer than this cannot survive the 500-character cap anyway (4 bytes per char at most).
const MAX_STRING_BYTES = MAX_VALUE_CHARS * 4;
const MAX_IFD_ENTRIES = 1000;

export function emptyRights(): RightsMetadata {
  return Object.fromEntries(RIGHTS_FIELDS.map((field) => [field, []])) as unknown as RightsMetadata;
}

function add(into: RightsMetadata, field: RightsField, raw: string): void {
  const value = raw.replace(/\s+/g, ' ').trim().slice(0, MAX_VALUE_CHARS);
  const list = into[field];
  if (value && list.length < MAX_VALUES_PER_FIELD && !list.includes(value)) list.push(value);
}

export function hasRights(rights: RightsMetadata): boolean {
  return RIGHTS_FIELDS.some((field) => rights[field].length > 0);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const latin1 = new TextDecoder('latin1');
/** UTF-8 when the bytes are valid UTF-8 (Korean tools write it without saying so), else Latin-1. */
function text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return latin1.decode(bytes);
  }
}

const ascii = (bytes: Uint8Array, start: number, length: number) =>
  start + length <= bytes.length ? String.fromCharCode(...bytes.subarray(start, start + length)) : '';

/** The blocks as sharp's `metadata()` names them: `exif` (TIFF, with or without `Exif\0\0`), `iptc`, `xmp`. */
export interface MetadataBlocks {
  exif?: Uint8Array;
  iptc?: Uint8Array;
  xmp?: Uint8Array;
}

// ---- EXIF: IFD0 Artist (0x013B) and Copyright (0x8298) ----

const ARTIST = 0x013b;
const COPYRIGHT = 0x8298;

export function readExif(block: Uint8Array, into: RightsMetadata = emptyRights()): RightsMetadata {
  const tiff = ascii(block, 0, 6) === 'Exif\0\0' ? block.subarray(6) : block;
  if (tiff.length < 8) return into;
  const order = ascii(tiff, 0, 2);
  if (order !== 'II' && order !== 'MM') return into;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const little = order === 'II';
  if (view.getUint16(2, little) !== 42) return into;
  const ifd = view.getUint32(4, little);
  if (ifd < 8 || ifd + 2 > tiff.length) return into;
  // Only IFD0 is read, once: no chain is followed, so offset loops cannot arise.
  const count = Math.min(view.getUint16(ifd, little), MAX_IFD_ENTRIES, Math.floor((tiff.length - ifd - 2) / 12));
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = view.getUint16(entry, little);
    if (tag !== ARTIST && tag !== COPYRIGHT) continue;
    const type = view.getUint16(entry + 2, little);
    // ASCII by the standard; BYTE and UNDEFINED are what some writers use for UTF-8.
    if (type !== 2 && type !== 1 && type !== 7) continue;
    const length = view.getUint32(entry + 4, little);
    const start = length <= 4 ? entry + 8 : view.getUint32(entry + 8, little);
    if (start >= tiff.length || length > tiff.length - start) continue;
    const bytes = tiff.subarray(start, start + Math.min(length, MAX_STRING_BYTES));
    // Copyright may hold "photographer\0editor"; every part is a holder.
    for (const part of splitNul(bytes)) add(into, tag === ARTIST ? 'creator' : 'copyright', text(part));
  }
  return into;
}

function splitNul(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0) {
      if (i > from) parts.push(bytes.subarray(from, i));
      from = i + 1;
    }
  }
  return parts;
}

// ---- IPTC IIM: 2:80 By-line, 2:110 Credit, 2:115 Source, 2:116 Copyright Notice ----

const IPTC_FIELDS: Record<number, RightsField> = { 80: 'creator', 110: 'credit', 115: 'source', 116: 'copyright' };

/** A Photoshop resource block (`Photoshop 3.0\0` and `8BIM` resources) or bare IIM datasets. */
export function readIptc(block: Uint8Array, into: RightsMetadata = emptyRights()): RightsMetadata {
  const iim = ascii(block, 0, 14) === 'Photoshop 3.0\0' ? photoshopIptc(block.subarray(14)) : block;
  if (iim) readIim(iim, into);
  return into;
}

/** Resource 0x0404 of a Photoshop image resource block. */
function photoshopIptc(block: Uint8Array): Uint8Array | null {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  let at = 0;
  while (at + 12 <= block.length && ascii(block, at, 4) === '8BIM') {
    const id = view.getUint16(at + 4);
    const nameLength = block[at + 6];
    // The Pascal name with its length byte is padded to an even size.
    const sizeAt = at + 6 + ((nameLength + 2) & ~1);
    if (sizeAt + 4 > block.length) return null;
    const size = view.getUint32(sizeAt);
    const data = sizeAt + 4;
    if (size > block.length - data) return null;
    if (id === 0x0404) return block.subarray(data, data + size);
    at = data + size + (size & 1);
  }
  return null;
}

function readIim(iim: Uint8Array, into: RightsMetadata): void {
  const view = new DataView(iim.buffer, iim.byteOffset, iim.byteLength);
  const found: { field: RightsField; bytes: Uint8Array }[] = [];
  let declaredUtf8 = false;
  let at = 0;
  while (at + 5 <= iim.length && iim[at] === 0x1c) {
    const record = iim[at + 1];
    const dataset = iim[at + 2];
    const size = view.getUint16(at + 3);
    // An extended dataset (size's high bit) holds nothing asked for here: stop rather than guess.
    if (size & 0x8000) break;
    const data = iim.subarray(at + 5, at + 5 + size);
    if (data.length < size) break;
    // 1:90 Coded Character Set: ESC % G is UTF-8.
    if (record === 1 && dataset === 90) declaredUtf8 = data.length >= 3 && data[0] === 0x1b && data[1] === 0x25 && data[2] === 0x47;
    const field = record === 2 ? IPTC_FIELDS[dataset] : undefined;
    if (field) found.push({ field, bytes: data.subarray(0, MAX_STRING_BYTES) });
    at += 5 + size;
  }
  const decode = (bytes: Uint8Array) => (declaredUtf8 ? new TextDecoder('utf-8').decode(bytes) : text(bytes));
  for (const { field, bytes } of found) add(into, field, decode(bytes));
}

// ---- XMP: dc:creator, dc:rights, photoshop:Credit, photoshop:Source, xmpRights:UsageTerms, xmpRights:WebStatement ----

const XMP_FIELDS: Record<string, RightsField> = {
  'dc:creator': 'creator',
  'dc:rights': 'copyright',
  'photoshop:Credit': 'credit',
  'photoshop:Source': 'source',
  'xmpRights:UsageTerms': 'usage_terms',
  'xmpRights:WebStatement': 'web_statement',
};

/**
 * The packet is read with htmlparser2's tokenizer in XML mode, one pass and no element stack (see
 * lib/net/html.ts): values come as an element's text (also inside rdf:Alt/Seq/Bag's rdf:li), as an
 * attribute of any element (`photoshop:Credit="..."`), or as `rdf:resource`. Only the first 256 KiB
 * is read.
 */
export function readXmp(block: Uint8Array, into: RightsMetadata = emptyRights()): RightsMetadata {
  const xml = new TextDecoder('utf-8').decode(block.subarray(0, MAX_XMP_BYTES));
  let field: RightsField | null = null;
  // Depth of open elements below the field's element; its value ends when that element closes.
  let depth = 0;
  let value = '';
  let tagName = '';
  let attribute = '';
  let attributeValue = '';
  const slice = (start: number, end: number) => xml.slice(start, end);
  const flush = () => {
    if (field) add(into, field, value);
    value = '';
  };
  const opened = () => {
    if (field) depth++;
    else if (Object.hasOwn(XMP_FIELDS, tagName)) {
      field = XMP_FIELDS[tagName];
      depth = 0;
      value = '';
    }
  };
  const closed = (name: string) => {
    if (!field) return;
    // Each list item is its own value; a value kept in the element itself ends with it.
    if (name === 'rdf:li' || depth === 0) flush();
    if (depth === 0) field = null;
    else depth--;
  };
  const ignore = () => {};
  const tokenizer = new Tokenizer(
    { xmlMode: true, decodeEntities: true },
    {
      ontext: (start, end) => {
        if (field && value.length < MAX_VALUE_CHARS * 2) value += slice(start, end);
      },
      ontextentity: (codepoint) => {
        if (field && value.length < MAX_VALUE_CHARS * 2) value += String.fromCodePoint(codepoint);
      },
      onopentagname: (start, end) => void (tagName = slice(start, end)),
      onattribname(start, end) {
        attribute = slice(start, end);
        attributeValue = '';
      },
      onattribdata: (start, end) => {
        if (attributeValue.length < MAX_VALUE_CHARS * 2) attributeValue += slice(start, end);
      },
      onattribentity: (codepoint) => void (attributeValue += String.fromCodePoint(codepoint)),
      onattribend() {
        if (Object.hasOwn(XMP_FIELDS, attribute)) add(into, XMP_FIELDS[attribute], attributeValue);
        else if (attribute === 'rdf:resource' && Object.hasOwn(XMP_FIELDS, tagName)) add(into, XMP_FIELDS[tagName], attributeValue);
      },
      onopentagend: opened,
      onselfclosingtag: () => {
        opened();
        closed(tagName);
      },
      onclosetag: (start, end) => closed(slice(start, end)),
      oncdata: ignore,
      oncomment: ignore,
      ondeclaration: ignore,
      onprocessinginstruction: ignore,
      onend: ignore,
    },
  );
  tokenizer.write(xml);
  tokenizer.end();
  return into;
}

export function readBlocks(blocks: MetadataBlocks): RightsMetadata {
  const rights = emptyRights();
  if (blocks.exif) readExif(blocks.exif, rights);
  if (blocks.iptc) readIptc(blocks.iptc, rights);
  if (blocks.xmp) readXmp(blocks.xmp, rights);
  return rights;
}

// ---- Containers: where each format keeps the blocks ----

const XMP_JPEG = 'http://ns.adobe.com/xap/1.0/\0';

/**
 * The metadata blocks of a JPEG, PNG or WebP file (other formats give none), byte for byte as
 * sharp's `metadata()` reports them; a PNG's deflated XMP is left to inflate.
 */
export function metadataBlocks(file: Uint8Array): MetadataBlocks & { xmpDeflated?: Uint8Array } {
  if (file[0] === 0xff && file[1] === 0xd8) return jpegBlocks(file);
  if (ascii(file, 0, 8) === '\x89PNG\r\n\x1a\n') return pngBlocks(file);
  if (ascii(file, 0, 4) === 'RIFF' && ascii(file, 8, 4) === 'WEBP') return webpBlocks(file);
  return {};
}

function jpegBlocks(file: Uint8Array): MetadataBlocks {
  const blocks: MetadataBlocks = {};
  let at = 2;
  // Segments up to the first scan: the metadata sits there, and each step moves forward.
  while (at + 4 <= file.length && file[at] === 0xff) {
    const marker = file[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) break;
    const length = (file[at + 2] << 8) | file[at + 3];
    if (length < 2 || at + 2 + length > file.length) break;
    const data = file.subarray(at + 4, at + 2 + length);
    if (marker === 0xe1 && !blocks.exif && ascii(data, 0, 6) === 'Exif\0\0') blocks.exif = data;
    else if (marker === 0xe1 && !blocks.xmp && ascii(data, 0, XMP_JPEG.length) === XMP_JPEG) blocks.xmp = data.subarray(XMP_JPEG.length);
    else if (marker === 0xed && !blocks.iptc && ascii(data, 0, 14) === 'Photoshop 3.0\0') blocks.iptc = data;
    at += 2 + length;
  }
  return blocks;
}

/** PNG keeps XMP in an iTXt or zTXt chunk named "XML:com.adobe.xmp", deflated or not (libvips deflates it). */
function pngBlocks(file: Uint8Array): MetadataBlocks & { xmpDeflated?: Uint8Array } {
  const blocks: MetadataBlocks & { xmpDeflated?: Uint8Array } = {};
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const keyword = 'XML:com.adobe.xmp\0';
  let at = 8;
  while (at + 12 <= file.length) {
    const length = view.getUint32(at);
    const type = ascii(file, at + 4, 4);
    if (length > file.length - at - 12 || type === 'IEND') break;
    const data = file.subarray(at + 8, at + 8 + length);
    const rest = data.subarray(keyword.length);
    if (type === 'eXIf') blocks.exif ??= data;
    // zTXt: keyword\0, method 0, deflated text.
    else if (type === 'zTXt' && ascii(data, 0, keyword.length) === keyword) blocks.xmpDeflated ??= rest.subarray(1);
    // iTXt: keyword\0, compressed flag, method, language\0, translated keyword\0, text.
    else if (type === 'iTXt' && ascii(data, 0, keyword.length) === keyword && rest.length >= 2) {
      let text = 2;
      for (let nul = 0; nul < 2 && text < rest.length; text++) if (rest[text] === 0) nul++;
      if (rest[0] === 0) blocks.xmp ??= rest.subarray(text);
      else blocks.xmpDeflated ??= rest.subarray(text);
    }
    at += 12 + length;
  }
  return blocks;
}

/** Inflates at most the XMP read limit; a broken stream gives what came out before it broke. */
async function inflateBounded(deflated: Uint8Array): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = new Blob([deflated.slice()]).stream().pipeThrough(new DecompressionStream('deflate')).getReader();
  try {
    while (total < MAX_XMP_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
    }
  } catch {
    // Damaged data: keep what was inflated.
  } finally {
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out.subarray(0, MAX_XMP_BYTES);
}

function webpBlocks(file: Uint8Array): MetadataBlocks {
  const blocks: MetadataBlocks = {};
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let at = 12;
  while (at + 8 <= file.length) {
    const type = ascii(file, at, 4);
    const length = view.getUint32(at + 4, true);
    if (length > file.length - at - 8) break;
    const data = file.subarray(at + 8, at + 8 + length);
    if (type === 'EXIF') blocks.exif ??= data;
    else if (type === 'XMP ') blocks.xmp ??= data;
    at += 8 + length + (length & 1);
  }
  return blocks;
}

/** The rights fields of a submitted file. */
export async function readRightsMetadata(file: Uint8Array): Promise<RightsMetadata> {
  const { xmpDeflated, ...blocks } = metadataBlocks(file);
  if (xmpDeflated && !blocks.xmp) blocks.xmp = await inflateBounded(xmpDeflated);
  return readBlocks(blocks);
}

/** The evidence text: one line per field found, `저작자: A; B`. */
export function rightsText(rights: RightsMetadata): string {
  return RIGHTS_FIELDS.filter((field) => rights[field].length > 0)
    .map((field) => `${RIGHTS_LABELS[field]}: ${rights[field].join('; ')}`)
    .join('\n');
}

const comparable = (s: string) => s.toLowerCase().replace(/[\p{P}\p{S}\p{Z}\s]/gu, '');

/**
 * True when the file names a creator or copyright holder and the submitter is absent or appears in
 * none of those fields (case, spaces and punctuation ignored).
 */
export function rightsMismatch(rights: RightsMetadata, submitter: string | null | undefined): boolean {
  const holders = [...rights.creator, ...rights.copyright].map(comparable).filter(Boolean);
  if (holders.length === 0) return false;
  const who = comparable(submitter ?? '');
  return who === '' || !holders.some((h) => h.includes(who));
}
