import { describe, expect, it } from 'vitest';
import { auditStatement } from '../../lib/repo/audit.js';
import { useTestEnv } from '../helpers/env.js';
import { AuditEventRecord } from './contract.js';
import { SYSTEM_ACTOR } from '../../lib/auth/actor.js';
import { body, refusal, seedSubmission, webMatch } from './seed.js';

const env = useTestEnv();

/** `count` switch events, one second apart, ids 1..count. */
async function seedEvents(count: number) {
  const statements = Array.from({ length: count }, (_, i) =>
    auditStatement(
      env.db,
      { action: 'provider.switch', target_type: 'provider', target_id: 'regional', details: { enabled: i % 2 === 0, n: i + 1 } },
      new Date(Date.parse('2026-11-01T00:00:00.000Z') + i * 1000).toISOString(),
      SYSTEM_ACTOR,
    ),
  );
  await env.db.batch(statements);
}
const events = async (query = '') => (await body(env.call('GET', `/api/audit-events${query}`))).events as any[];

const SERVICE = { type: 'system', id: null, name: 'service', role: null, client: null };

describe('GET /api/audit-events', () => {
  it('answers {events}, newest first, in the contract shape', async () => {
    await seedEvents(3);
    const answer = await body(env.call('GET', '/api/audit-events'));
    expect(Object.keys(answer)).toEqual(['events']);
    expect(answer.events.map((e: unknown) => AuditEventRecord.parse(e))).toEqual([
      {
        id: 3,
        at: '2026-11-01T00:00:02.000Z',
        action: 'provider.switch',
        target_type: 'provider',
        target_id: 'regional',
        details: { enabled: true, n: 3 },
        actor: SERVICE,
      },
      {
        id: 2,
        at: '2026-11-01T00:00:01.000Z',
        action: 'provider.switch',
        target_type: 'provider',
        target_id: 'regional',
        details: { enabled: false, n: 2 },
        actor: SERVICE,
      },
      {
        id: 1,
        at: '2026-11-01T00:00:00.000Z',
        action: 'provider.switch',
        target_type: 'provider',
        target_id: 'regional',
        details: { enabled: true, n: 1 },
        actor: SERVICE,
      },
    ]);
  });

  it('defaults to 100, clamps a larger limit to 1000', async () => {
    await seedEvents(1005);
    expect(await events()).toHaveLength(100);
    expect((await events())[0].id).toBe(1005);
    expect(await events('?limit=7')).toHaveLength(7);
    expect(await events('?limit=1000')).toHaveLength(1000);
    expect(await events('?limit=5000')).toHaveLength(1000);
    expect(await events('?limit=99999999999999999999')).toHaveLength(1000);
  });

  it('pages back with before (an event id)', async () => {
    await seedEvents(10);
    const first = await events('?limit=4');
    expect(first.map((e) => e.id)).toEqual([10, 9, 8, 7]);
    const second = await events(`?limit=4&before=${first.at(-1).id}`);
    expect(second.map((e) => e.id)).toEqual([6, 5, 4, 3]);
    const last = await events(`?limit=4&before=${second.at(-1).id}`);
    expect(last.map((e) => e.id)).toEqual([2, 1]);
    expect(await events('?before=1')).toEqual([]);
  });

  it('refuses a negative, zero, fractional or non-numeric limit and a malformed before with 400', async () => {
    await seedEvents(2);
    for (const query of ['limit=-1', 'limit=-100', 'limit=0', 'limit=abc', 'limit=1.5', 'limit=1e3', 'limit=', 'before=-1', 'before=x', 'before=0']) {
      const message = await refusal(env.call('GET', `/api/audit-events?${query}`), 400, 'invalid_request');
      expect(message).toMatch(/limit|before/);
    }
  });

  it('records every review and admin action with what changed', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await body(env.call('POST', `/api/evidence/${match.id}/status`, { status: '판단에 사용' }));
    const { knowledge_entry: entry } = await body(env.call('POST', '/api/submissions/s1/decision', { decision: '반려', note: 'copy' }));
    await body(env.call('POST', `/api/knowledge/${entry.id}/promote-watchlist`));
    await body(env.call('POST', `/api/knowledge/${entry.id}/exclude-watchlist`));
    await body(env.call('PATCH', '/api/providers/regional', { enabled: false }));
    await body(env.call('POST', '/api/providers/emergency-disable'));
    await body(env.call('POST', '/api/retention/run'));
    const all = await events();
    expect(all.map((e) => e.action)).toEqual([
      'retention.run',
      'provider.emergency_disable',
      'provider.switch',
      'knowledge.exclude',
      'knowledge.promote',
      'submission.decision',
      'evidence.status',
    ]);
    expect(all.find((e) => e.action === 'submission.decision').details).toEqual({
      from: null,
      from_note: null,
      from_decided_at: null,
      to: '반려',
      note: 'copy',
      evidence_ids: [match.id],
      knowledge_entry_id: entry.id,
    });
    // Every event says who acted and from where.
    expect(all.every((e) => e.actor.type === 'admin_token' && e.actor.role === 'admin')).toBe(true);
    // Reads are not actions: they leave no trace.
    await body(env.call('GET', '/api/review-queue'));
    await body(env.call('GET', '/api/submissions/s1/review'));
    expect(await events()).toHaveLength(all.length);
  });
});
