import { describe, expect, it } from 'vitest';
import { addEvidence } from '../../lib/repo/evidence.js';
import { saveDecisionStatement, saveRiskStatement, upsertSubmissionStatement } from '../../lib/repo/submissions.js';
import { csvCell } from '../../lib/review/exports.js';
import { useTestEnv } from '../helpers/env.js';
import { body, refusal, seedSubmission, webMatch } from './seed.js';

// More than two pages of the export, so paging and the stream's chunks are exercised.
const SUBMISSIONS = 1234;

const env = useTestEnv();

async function seedMany() {
  const now = env.clock.now().toISOString();
  const statements = [];
  for (let i = 0; i < SUBMISSIONS; i++) {
    const id = `s-${String(i).padStart(4, '0')}`;
    statements.push(
      upsertSubmissionStatement(
        env.db,
        {
          id,
          title: i === 7 ? '=HYPERLINK("http://evil.example","클릭")' : i === 8 ? '쉼표, "따옴표"\n줄바꿈' : `서울 야경 ${i}`,
          file: `images/${id}.jpg`,
          origin: 'quick',
          submitted_at: '2026-11-20 09:30',
          submitted_at_epoch: 1_790_000_000 + i,
          width: 10,
          height: 10,
          format: 'jpeg',
          bytes: 1,
          sha256: 'a'.repeat(64),
        },
        now,
      ),
    );
    const score = (i * 37) % 101;
    statements.push(saveRiskStatement(env.db, id, { score, level: score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low', signals: [] }, now));
    if (i % 5 === 0)
      statements.push(
        saveDecisionStatement(env.db, id, i % 10 === 0 ? '반려' : '승인', i === 10 ? '웹 게시물과 동일' : null, `2026-11-21T0${i % 9}:00:00.000Z`),
      );
  }
  await env.db.batch(statements);
}

/** The whole body, and how many chunks it came in. */
async function download(path: string): Promise<{ text: string; chunks: number; response: Response }> {
  const response = await env.call('GET', path);
  expect(response.status).toBe(200);
  const reader = response.clone().body!.getReader();
  let chunks = 0;
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
    chunks++;
  }
  return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(await response.arrayBuffer()), chunks, response };
}

/** CSV as a spreadsheet reads it: quoted cells may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += ch;
  }
  return rows;
}

describe('exports', () => {
  it('the queue as CSV: a byte-order mark, every row in the queue order, filters, safe cells, streamed in pages', async () => {
    await seedMany();
    const { text, chunks, response } = await download('/api/exports/queue');
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="review-queue.csv"');
    expect(text.startsWith('\ufeffid,title,')).toBe(true);
    expect(chunks).toBeGreaterThanOrEqual(3);
    const [header, ...rows] = parseCsv(text.slice(1));
    expect(rows).toHaveLength(SUBMISSIONS);
    // The same rows in the same order as paging through the API.
    const ids: string[] = [];
    for (let cursor = ''; ; ) {
      const page = await body(env.call('GET', `/api/review-queue?limit=200${cursor ? `&cursor=${cursor}` : ''}`));
      ids.push(...page.items.map((s: { id: string }) => s.id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(rows.map((r) => r[0])).toEqual(ids);
    const title = header.indexOf('title');
    expect(rows.find((r) => r[0] === 's-0007')![title]).toBe(`'=HYPERLINK("http://evil.example","클릭")`);
    expect(rows.find((r) => r[0] === 's-0008')![title]).toBe('쉼표, "따옴표"\n줄바꿈');
    expect(rows.find((r) => r[0] === 's-0010')![header.indexOf('decision')]).toBe('반려');

    const filtered = parseCsv(
      (await download(`/api/exports/queue?decision=${encodeURIComponent('승인')}&level=high&q=${encodeURIComponent('야경')}`)).text.slice(1),
    ).slice(1);
    const expected = await body(
      env.call('GET', `/api/review-queue?decision=${encodeURIComponent('승인')}&level=high&q=${encodeURIComponent('야경')}&limit=200`),
    );
    expect(filtered.map((r) => r[0])).toEqual(expected.items.map((s: { id: string }) => s.id));
    expect(filtered.length).toBe(expected.total);
  });

  it('the queue as JSON Lines: one object per line with typed values', async () => {
    await seedMany();
    const { text, response } = await download('/api/exports/queue?format=jsonl&decision=undecided');
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(SUBMISSIONS - Math.ceil(SUBMISSIONS / 5));
    expect(lines[0]).toMatchObject({ decision: null, attention_match: false, evidence_count: 0 });
    expect(typeof lines[0].risk_score).toBe('number');
    expect(lines.find((l) => l.id === 's-0008').title).toBe('쉼표, "따옴표"\n줄바꿈');
  });

  it('decisions with their evidence counts, latest first; the watchlist by state', async () => {
    await seedSubmission(env, 'copied', { evidence: [webMatch(), webMatch('another page')] });
    await seedSubmission(env, 'kept');
    const [used] = await addEvidence(env.db, 'kept', [webMatch()], env.clock.now().toISOString());
    await body(env.call('POST', `/api/evidence/${used.id}/status`, { status: '판단에 사용' }));
    await body(env.call('POST', '/api/submissions/copied/decision', { decision: '반려', note: '무단 사용' }));
    env.clock.advance(60_000);
    await body(env.call('POST', '/api/submissions/kept/decision', { decision: '보류' }));

    const decisions = parseCsv((await download('/api/exports/decisions')).text.slice(1));
    expect(decisions[0]?.join(',')).toBe('id,title,decision,note,decided_at,risk_score,risk_level,evidence_count,evidence_used,web_matches,attention_match');
    expect(decisions.slice(1).map((r) => [r[0], r[2], r[3], r[7], r[8], r[9]])).toEqual([
      ['kept', '보류', '', '1', '1', '1'],
      ['copied', '반려', '무단 사용', '2', '0', '2'],
    ]);
    const watchlist = (await download('/api/exports/watchlist?format=jsonl')).text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(watchlist.map((e) => [e.submission_id, e.state, e.decision]).sort()).toEqual([
      ['copied', '주의 후보', '반려'],
      ['kept', '주의 후보', '보류'],
    ]);
    expect(watchlist[0].title).toMatch(/^title of /);
    const confirmed = (await download(`/api/exports/watchlist?state=${encodeURIComponent('확정 DB 편입')}`)).text;
    expect(confirmed).toBe('\ufeffid,submission_id,title,state,decision,phash,created_at,updated_at\r\n');
  });

  it('refuses an unknown format or filter with 400, and needs an operator', async () => {
    await refusal(env.call('GET', '/api/exports/queue?format=xlsx'), 400, 'invalid_request');
    await refusal(env.call('GET', '/api/exports/queue?level=critical'), 400, 'invalid_request');
    await refusal(env.call('GET', '/api/exports/watchlist?state=done'), 400, 'invalid_request');
    await refusal(env.call('GET', '/api/exports/decisions', undefined, { authorization: '' }), 401, 'unauthenticated');
  });

  it('writes cells a spreadsheet reads back as they were, never as a formula', () => {
    expect(['plain', '=1+1', '+82 10', '-5', '@SUM(A1)', 'a,b', 'say "hi"', 'two\nlines', '', null, 3, true].map(csvCell)).toEqual([
      'plain',
      "'=1+1",
      "'+82 10",
      "'-5",
      "'@SUM(A1)",
      '"a,b"',
      '"say ""hi"""',
      '"two\nlines"',
      '',
      '',
      '3',
      'true',
    ]);
  });
});
