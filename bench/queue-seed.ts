/**
 * Seeds a data folder with a rights team's queue through the repository: N submissions (default
 * 100,000), five evidence rows each, risk spread over the three levels, about a third decided, the
 * enrichment statuses and attention matches a real queue has. Only database rows are written (the
 * queue is read from the database; no image file is needed to list it).
 *
 *   npx tsx bench/queue-seed.ts <data folder> [submissions]
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConfig } from '../lib/config.js';
import { createEnv } from '../lib/env.js';
import { createLogger } from '../lib/log.js';
import { insertEvidenceStatement, type NewEvidence } from '../lib/repo/evidence.js';
import { saveDecisionStatement, saveRiskStatement, upsertSubmissionStatement } from '../lib/repo/submissions.js';
import { formatLocal } from '../lib/time.js';
import { seededRandom } from '../test/helpers/random.js';
import { DECISIONS } from '../lib/vocabulary.js';

const EVIDENCE_PER_SUBMISSION = 5;
const BATCH = 2000;
const WORDS = ['서울', '야경', '인물', '사진', 'portrait', 'street', 'festival', '한강', 'concert', '가을', 'studio', 'product', '제품', '풍경', 'wedding'];
// No pending enrichment: the service would start it on these rows, which have no image files.
const ENRICHMENT = ['done', 'done', 'done', 'done', 'skipped', 'failed'] as const;

const evidenceFor = (random: () => number, i: number): NewEvidence[] => {
  const items: NewEvidence[] = [];
  for (let k = 0; k < EVIDENCE_PER_SUBMISSION; k++) {
    const match = random() < 0.2;
    items.push({
      source: 'global_vision',
      kind: match ? 'full_match' : 'visually_similar',
      group: match ? 'web_match' : 'web_related',
      title: `page ${i}-${k}`,
      url: `https://pages.example/${i}/${k}`,
      image_url: `https://pages.example/${i}/${k}.jpg`,
      similarity: match ? 0.95 : 0.5,
      matched: match,
    });
  }
  // About one in fifty matches an attention candidate.
  if (random() < 0.02)
    items[0] = { source: 'watchlist', kind: 'attention_candidate', group: 'attention', similarity: 1, matched: true, knowledge_entry_id: `ke_${i}` };
  return items;
};

export async function seedQueue(dataDir: string, count: number): Promise<void> {
  const { config } = buildConfig({ SVC_DATA_DIR: dataDir });
  const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
  const random = seededRandom(11);
  const now = new Date().toISOString();
  const firstDay = Date.parse('2026-01-01T00:00:00Z');
  try {
    for (let start = 0; start < count; start += BATCH) {
      const statements = [];
      for (let i = start; i < Math.min(count, start + BATCH); i++) {
        const id = `s${String(i).padStart(6, '0')}`;
        const minute = new Date(firstDay + Math.floor(random() * 300 * 86400) * 1000);
        minute.setUTCSeconds(0, 0);
        const title = `${WORDS[Math.floor(random() * WORDS.length)]} ${WORDS[Math.floor(random() * WORDS.length)]} ${i}`;
        statements.push(
          upsertSubmissionStatement(
            env.db,
            {
              id,
              title,
              file: `images/${id}.jpg`,
              origin: 'quick',
              submitted_at: formatLocal(minute, config.SVC_TIMEZONE),
              submitted_at_epoch: minute.getTime() / 1000,
              width: 1600,
              height: 1200,
              format: 'jpeg',
              bytes: 400_000,
              sha256: id.padEnd(64, '0'),
            },
            now,
          ),
        );
        for (const e of evidenceFor(random, i)) statements.push(insertEvidenceStatement(env.db, id, e, now));
        const score = Math.floor(random() * 101);
        statements.push(saveRiskStatement(env.db, id, { score, level: score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low', signals: [] }, now));
        if (random() < 0.33) statements.push(saveDecisionStatement(env.db, id, DECISIONS[Math.floor(random() * DECISIONS.length)], null, now));
        statements.push(
          env.db
            .prepare("UPDATE submissions SET analysis_status = 'done', phash = 'c3a1f00e9b4d2a17', enrichment_status = ? WHERE id = ?")
            .bind(ENRICHMENT[Math.floor(random() * ENRICHMENT.length)], id),
        );
      }
      await env.db.batch(statements);
    }
    await env.db.prepare('ANALYZE').run();
    await env.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').run();
  } finally {
    await env.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, n] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: npx tsx bench/queue-seed.ts <data folder> [submissions]');
    process.exit(2);
  }
  const started = performance.now();
  await seedQueue(path.resolve(dir), Number(n ?? 100_000));
  console.log(`seeded ${n ?? 100_000} submissions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
