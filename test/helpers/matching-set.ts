import sharp from 'sharp';
import { fixturePath } from './fixtures.js';
import { seededRandom } from './random.js';
import type { Database } from '../../lib/ports.js';

/**
 * One set of photographs and edits of them for the order-free matching tests (decision 0033): the
 * same set ingested under other names, in other orders and at other concurrencies must give the
 * same internal matches. Among the edits a vertical flip and a watermark (issue 29's missing pair),
 * a mirror, a crop, a small turn and a re-encoding; three other photographs beside them.
 */
const watermark = (width: number, height: number) =>
  Buffer.from(
    `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><text x="50%" y="55%" text-anchor="middle" font-size="${Math.round(height / 6)}"
      font-family="sans-serif" font-weight="bold" fill="white" fill-opacity="0.55">SAMPLE ©</text></svg>`,
  );

async function edits(fixture: string, which: string[]): Promise<Record<string, Buffer>> {
  const photo = () => sharp(fixturePath(fixture));
  const { width, height } = await photo().metadata();
  const all: Record<string, () => Promise<Buffer>> = {
    original: () => photo().jpeg({ quality: 92 }).toBuffer(),
    vflip: () => photo().flip().jpeg({ quality: 90 }).toBuffer(),
    mirror: () => photo().flop().jpeg({ quality: 90 }).toBuffer(),
    watermark: () =>
      photo()
        .composite([{ input: watermark(width!, height!) }])
        .jpeg({ quality: 90 })
        .toBuffer(),
    crop: () =>
      photo()
        .extract({ left: Math.round(width! * 0.06), top: Math.round(height! * 0.04), width: Math.round(width! * 0.9), height: Math.round(height! * 0.92) })
        .jpeg({ quality: 90 })
        .toBuffer(),
    turned: () => photo().rotate(7, { background: '#000000' }).jpeg({ quality: 90 }).toBuffer(),
    reencoded: () => photo().jpeg({ quality: 60 }).toBuffer(),
  };
  const stem = fixture.replace(/\.\w+$/, '');
  return Object.fromEntries(await Promise.all(which.map(async (edit) => [`${stem}-${edit}`, await all[edit]()] as const)));
}

/** The set: content name -> JPEG bytes. */
export async function matchingSet(): Promise<Record<string, Buffer>> {
  return {
    ...(await edits('astronaut.png', ['original', 'vflip', 'mirror', 'watermark', 'crop', 'turned', 'reencoded'])),
    ...(await edits('camera.png', ['original', 'vflip', 'watermark'])),
    ...(await edits('coffee.png', ['original'])),
    ...(await edits('chelsea.png', ['original'])),
    ...(await edits('rocket.jpg', ['original'])),
  };
}

/** The set's content names under shuffled submission ids (`seed` picks the shuffle): id -> content name. */
export function shuffledNames(contents: string[], seed: number): Map<string, string> {
  const random = seededRandom(seed);
  const order = contents.map((name) => ({ name, key: random() }));
  order.sort((a, b) => a.key - b.key);
  return new Map(order.map(({ name }, i) => [`s${String(i).padStart(2, '0')}-${Math.floor(random() * 1e6)}`, name]));
}

/**
 * Every internal match as content names, `submission > other: transform similarity`, sorted, so
 * that runs under other ids compare equal.
 */
export async function internalLinks(db: Database, contentOf: (id: string) => string): Promise<string[]> {
  const rows = await db
    .prepare("SELECT submission_id, matched_submission_id, match_transform, similarity FROM evidence WHERE group_key = 'internal'")
    .all<{ submission_id: string; matched_submission_id: string; match_transform: string; similarity: number }>();
  return rows.results
    .map((r) => `${contentOf(r.submission_id)} > ${contentOf(r.matched_submission_id)}: ${r.match_transform} ${r.similarity.toFixed(4)}`)
    .sort();
}

/**
 * Every submission's stored risk as content names, `submission: score level signal[evidence]...`,
 * each signal's evidence named by the submission it matches (or its kind), sorted, so that runs
 * under other ids compare equal; a signal that cites evidence no longer stored names it `gone`.
 */
export async function storedRisks(db: Database, contentOf: (id: string) => string): Promise<string[]> {
  const [submissions, evidence] = await db.batch([
    db.prepare('SELECT id, risk_score, risk_level, risk_signals FROM submissions'),
    db.prepare('SELECT id, kind, matched_submission_id FROM evidence'),
  ]);
  const named = new Map(
    (evidence as { results: { id: string; kind: string; matched_submission_id: string | null }[] }).results.map((e) => [
      e.id,
      e.matched_submission_id ? contentOf(e.matched_submission_id) : e.kind,
    ]),
  );
  return (submissions as { results: { id: string; risk_score: number; risk_level: string; risk_signals: string }[] }).results
    .map((r) => {
      const signals = (JSON.parse(r.risk_signals) as { code: string; evidence_ids: string[] }[]).map(
        (s) =>
          `${s.code}[${s.evidence_ids
            .map((id) => named.get(id) ?? 'gone')
            .sort()
            .join(',')}]`,
      );
      return `${contentOf(r.id)}: ${r.risk_score} ${r.risk_level} ${signals.join(' ')}`;
    })
    .sort();
}

/** Every kept pair verdict, in key order: two runs over the same ids compare equal when they judged alike. */
export async function pairVerdicts(db: Database): Promise<unknown[]> {
  return (await db.prepare('SELECT a, b, a_sha256, b_sha256, threshold, matched, similarity, a_view, b_view FROM submission_pairs ORDER BY a, b').all())
    .results;
}
