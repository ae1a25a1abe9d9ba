/**
 * Classifies an IP address for downloads of web content. Result and page URLs come from the open
 * web, so an address inside the operator's network (loopback, private ranges, link-local including
 * the cloud metadata address, and the like) is refused unless the operator allows it.
 */

type V4Range = readonly [base: number, prefix: number, label: string];

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

const BLOCKED_V4: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared (carrier-grade NAT)'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function parseV4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value >>> 0;
}

/** Sixteen bytes of an IPv6 address in any textual form (with `::`, an embedded IPv4 tail or a zone). */
function parseV6(text: string): Uint8Array | null {
  const withoutZone = text.split('%')[0];
  let groups: number[] = [];
  const halves = withoutZone.split('::');
  if (halves.length > 2) return null;
  const readHalf = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (i === pieces.length - 1 && piece.includes('.')) {
        const tail = parseV4(piece);
        if (tail === null) return null;
        out.push(tail >>> 16, tail & 0xffff);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = readHalf(halves[0]);
  const tail = halves.length === 2 ? readHalf(halves[1]) : [];
  if (!head || !tail) return null;
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return null;
    groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

function v4Reason(value: number): string | null {
  for (const [base, prefix, label] of BLOCKED_V4) {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    if ((value & mask) >>> 0 === base) return label;
  }
  if (value === 0xffffffff) return 'broadcast';
  return null;
}

const startsWith = (bytes: Uint8Array, prefix: number[]) => prefix.every((b, i) => bytes[i] === b);

function v6Reason(bytes: Uint8Array): string | null {
  const embeddedV4 = () => ((bytes[12] << 24) | (bytes[13] << 16) | (bytes[14] << 8) | bytes[15]) >>> 0;
  const zeros = (n: number) => new Array<number>(n).fill(0);
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) forms
  // reach the embedded IPv4 address, so they are judged by it.
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return v4Reason(embeddedV4());
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, ...zeros(8)])) return v4Reason(embeddedV4());
  if (startsWith(bytes, zeros(12))) {
    const tail = embeddedV4();
    if (tail === 0) return 'unspecified';
    if (tail === 1) return 'loopback';
    return v4Reason(tail);
  }
  if ((bytes[0] & 0xfe) === 0xfc) return 'private (unique local)';
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0x80) return 'link-local';
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0xc0) return 'site-local';
  if (bytes[0] === 0xff) return 'multicast';
  return null;
}

/**
 * Why an address must not be fetched from the open web, or null when it is a public address.
 * Anything that does not parse as an IP address is refused too.
 */
export function blockedAddressReason(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const value = parseV4(bare);
  if (value !== null) return v4Reason(value);
  const bytes = bare.includes(':') ? parseV6(bare) : null;
  return bytes === null ? 'not an IP address' : v6Reason(bytes);
}

/** Whether a URL host (brackets removed) is an IP address literal rather than a name. */
export function isAddressLiteral(host: string): boolean {
  return parseV4(host) !== null || (host.includes(':') && parseV6(host) !== null);
}
