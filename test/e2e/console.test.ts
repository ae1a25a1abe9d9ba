import { describe, expect, it } from 'vitest';
import { writeReloadProgress } from '../../lib/repo/reload-progress.js';
import type { Seed, TestServer } from '../helpers/server.js';
import { ACCOUNTS, waitForAnalysis, waitForEnrichment, type ConsolePage } from './harness.js';
import { consoleSession } from './session.js';

/** The same photo twice, so the two submissions match each other internally. */
const TWIN_ASTRONAUTS: Seed = { images: { 'astronaut.png': 'astronaut.png', 'astronaut-copy.png': 'astronaut.png' } };
const XSS_TITLE = '<img src=x onerror=alert(1)>';

describe('operator console in a real browser', () => {
  const session = consoleSession();
  let service: TestServer;
  let opened: ConsolePage;

  async function open(seed: Seed, hash?: string, reload = true, settings: Record<string, string> = {}) {
    service = await session.start({ seed, settings });
    if (reload) {
      await service.api('POST', '/api/submissions/reload');
      await waitForAnalysis(service);
    }
    opened = await session.open(service, hash);
    return { page: opened.page, service };
  }

  it('names the first 100 of a large reload and pages the rest of the list from the kept report', async () => {
    const images = Object.fromEntries(Array.from({ length: 105 }, (_, i) => [`r-${String(i).padStart(3, '0')}.png`, 'rocket.jpg']));
    const { page } = await open({ images }, '#/queue', false);
    await page.locator('#reload-submissions').click();
    const report = page.locator('.reload-report');
    await report.waitFor();
    await expect(report.locator('dt').first().textContent()).resolves.toContain('가져옴 (imported) 105');
    const imported = report.locator('dd').first();
    await expect(imported.locator('.id-list a').count()).resolves.toBe(100);
    const more = imported.locator('.reload-more');
    await expect(more.textContent()).resolves.toBe('더 보기 (5건 남음)');
    await more.click();
    await page.waitForFunction(() => document.querySelectorAll('.reload-report dd:first-of-type .id-list a').length === 105);
    await expect(more.isHidden()).resolves.toBe(true);
    const ids = await imported.locator('.id-list a').allTextContents();
    expect(new Set(ids).size).toBe(105);
  });

  it('shows on the reload button how far a running reload has come, from the progress the reload keeps', async () => {
    const { page, service } = await open({ images: { 'chelsea.png': 'chelsea.png' } }, '#/queue', false);
    // A reload under way in another process, as the progress it keeps in the database says.
    const now = service.server.env.clock.now().toISOString();
    await writeReloadProgress(service.server.env.db, { started_at: now, phase: 'reading', listed: 1200, to_read: 1200, read: 345, updated_at: now });
    // The button's own reload reaches the service only once the console has shown that progress.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/submissions/reload', async (route) => {
      await held;
      await route.continue();
    });
    const button = page.locator('#reload-submissions');
    await button.click();
    await page.waitForFunction(() => document.querySelector('#reload-submissions')?.textContent === '읽는 중… (파일 345 / 1,200)');
    release();
    await page.locator('.reload-report').waitFor();
    await expect(button.textContent()).resolves.toBe('제출물 다시 읽기 (reload)');
    await expect(service.api('GET', '/api/submissions/reload/progress')).resolves.toEqual({ reload: null });
  });

  it('imports submissions with the reload button, reports rejections and lists the queue', async () => {
    const { page } = await open(
      {
        images: { 'astronaut.png': 'astronaut.png', 'astronaut-copy.png': 'astronaut.png', 'chelsea.png': 'chelsea.png' },
        registry: [{ id: 'outside', title: 'Outside', file: '../secret.png', width: 10, height: 10, submitted_at: '2026-11-20 09:30' }],
      },
      '#/queue',
      false,
    );
    await expect(page.locator('.empty').textContent()).resolves.toContain('제출물이 없습니다');

    await page.locator('#reload-submissions').click();
    const report = page.locator('.reload-report');
    await report.waitFor();
    await expect(report.locator('dt').first().textContent()).resolves.toContain('가져옴 (imported) 3');
    await expect(report.locator('.id-list a').allTextContents()).resolves.toEqual(expect.arrayContaining(['astronaut', 'astronaut-copy', 'chelsea']));
    const rejected = report.locator('.rejected-table tbody tr');
    await expect(rejected.count()).resolves.toBe(1);
    await expect(rejected.textContent()).resolves.toMatch(/outside.*leaves data\/submissions\/images/);

    const rows = page.locator('.queue-row');
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 3);
    // The two matching astronauts carry an internal-match signal and sort above the cat.
    await expect(rows.nth(2).getAttribute('data-submission-id')).resolves.toBe('chelsea');
    const astronaut = page.locator('.queue-row[data-submission-id="astronaut"]');
    const queued = await service.api('GET', '/api/review-queue');
    const expected = queued.items.find((s: { id: string }) => s.id === 'astronaut');
    await expect(astronaut.locator('.risk-score').textContent()).resolves.toBe(String(expected.risk.score));
    await expect(astronaut.locator('.decision').textContent()).resolves.toBe('미결정');
    // The progress panel counts the analyses through, and the rows then show their small thumbnails.
    await page.waitForFunction(() => /^3 \/ 3\b/.test(document.querySelector('[data-job-type="analyse"] .progress-figures')?.textContent ?? ''));
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('.queue-row img.thumb')].every(
        (img) => img.getAttribute('src')?.startsWith('/media/thumbs/') && img.complete && img.naturalWidth > 0,
      ),
    );
    await expect(page.locator('.queue-row img.thumb').evaluateAll((imgs) => imgs.map((img) => img.getAttribute('src')).sort())).resolves.toEqual([
      '/media/thumbs/astronaut-copy.jpg',
      '/media/thumbs/astronaut.jpg',
      '/media/thumbs/chelsea.jpg',
    ]);

    await page.locator('#filter-decision').selectOption('반려');
    await page.waitForFunction(() => location.hash.includes('decision=') && document.querySelector('.queue-list .empty') !== null);
    await page.locator('#filter-decision').selectOption('undecided');
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 3);

    // Search by a part of the id or title, then the enrichment and attention filters.
    await page.locator('#filter-q').fill('CHELS');
    await page.locator('#filter-q').press('Enter');
    await page.waitForFunction(() => location.hash.includes('q=CHELS') && document.querySelectorAll('.queue-row').length === 1);
    await expect(page.locator('.queue-row').getAttribute('data-submission-id')).resolves.toBe('chelsea');
    await page.locator('#filter-q').fill('');
    await page.locator('#filter-q').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 3);
    await page.locator('#filter-attention').selectOption('true');
    await page.waitForFunction(() => location.hash.includes('attention=true') && document.querySelector('.queue-list .empty') !== null);
    await page.locator('#filter-attention').selectOption('');
    await waitForEnrichment(service, ['astronaut', 'astronaut-copy', 'chelsea']);
    const settled = (await service.api('GET', '/api/review-queue')).items as { id: string; enrichment_status: string }[];
    const status = settled.find((s) => s.id === 'chelsea')!.enrichment_status;
    const sameStatus = settled
      .filter((s) => s.enrichment_status === status)
      .map((s) => s.id)
      .sort();
    await page.locator('#filter-enrichment').selectOption(status);
    await page.waitForFunction((n) => location.hash.includes('enrichment=') && document.querySelectorAll('.queue-row').length === n, sameStatus.length);
    await expect(page.locator('.queue-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-submission-id')).sort())).resolves.toEqual(sameStatus);
    await page.locator('#filter-enrichment').selectOption('running');
    await page.waitForFunction(() => location.hash.includes('enrichment=running') && document.querySelector('.queue-list .empty') !== null);

    // The export link carries the filters shown, and downloads with the operator's session.
    await page.locator('#filter-enrichment').selectOption('');
    await page.locator('#filter-q').fill('astro');
    await page.locator('#filter-q').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 2);
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-queue').click()]);
    expect(download.suggestedFilename()).toBe('review-queue.csv');
    const csv = await new Promise<string>((resolve, reject) => {
      download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (chunk) => (text += chunk));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    });
    expect(
      csv
        .split('\r\n')
        .filter(Boolean)
        .map((line) => line.replace(/^\ufeff/, '').split(',')[0])
        .sort(),
    ).toEqual(['astronaut', 'astronaut-copy', 'id']);
  });

  it('opens a review with the face box over the image, the fingerprint and the evidence', async () => {
    const { page, service } = await open(TWIN_ASTRONAUTS);
    const detail = await service.api('GET', '/api/submissions/astronaut/review');
    await page.locator('.queue-title', { hasText: /^astronaut$/ }).click();
    await page.waitForURL(/#\/review\/astronaut$/);
    await expect(page.locator('h1.review-title').textContent()).resolves.toBe('astronaut');
    await expect(page.locator('.phash').textContent()).resolves.toBe(detail.submission.phash);

    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.review-image');
      return !!img && img.complete && img.naturalWidth > 0;
    });
    expect(detail.submission.faces.length).toBeGreaterThan(0);
    await expect(page.locator('.face-box').count()).resolves.toBe(detail.submission.faces.length);
    const image = (await page.locator('.review-image').boundingBox())!;
    const drawn = (await page.locator('.face-box').first().boundingBox())!;
    const face = detail.submission.faces[0].box;
    const scale = image.width / detail.submission.width;
    expect(Math.abs(drawn.x - (image.x + face.x * scale))).toBeLessThan(3);
    expect(Math.abs(drawn.y - (image.y + face.y * scale))).toBeLessThan(3);
    expect(Math.abs(drawn.width - face.width * scale)).toBeLessThan(3);

    const group = page.locator('.group-internal');
    await expect(group.locator('.group-title').textContent()).resolves.toContain('내부 유사 제출물');
    const card = group.locator('.evidence').first();
    await expect(card.locator('.similarity').textContent()).resolves.toBe('100.0%');
    await expect(card.textContent()).resolves.toContain('identity');
    await expect(card.locator('a[href="#/review/astronaut-copy"]').count()).resolves.toBe(1);

    // The case bundle downloads as a ZIP with the operator's session.
    const [bundle] = await Promise.all([page.waitForEvent('download'), page.locator('#case-bundle').click()]);
    expect(bundle.suggestedFilename()).toBe('case-astronaut.zip');
  });

  it('marks evidence and shows the new status and risk', async () => {
    const { page, service } = await open(TWIN_ASTRONAUTS, '#/review/astronaut');
    const card = page.locator('.group-internal .evidence').first();
    const evidenceId = await card.getAttribute('data-evidence-id');

    await card.locator('[data-status="무관"]').click();
    await page.locator(`[data-evidence-id="${evidenceId}"] [data-status="무관"][aria-pressed="true"]`).waitFor();
    let detail = await service.api('GET', '/api/submissions/astronaut/review');
    expect(detail.evidence.find((e: { id: string }) => e.id === evidenceId).status).toBe('무관');
    const fresh = page.locator(`[data-evidence-id="${evidenceId}"]`);
    await expect(fresh.locator('.badge.status').textContent()).resolves.toBe('무관');
    await expect(fresh.textContent()).resolves.toContain('점수 제외');
    await expect(page.locator('.review-head .risk-score').textContent()).resolves.toBe(String(detail.submission.risk.score));

    await fresh.locator('[data-status="판단에 사용"]').click();
    await page.locator(`[data-evidence-id="${evidenceId}"] [data-status="판단에 사용"][aria-pressed="true"]`).waitFor();
    detail = await service.api('GET', '/api/submissions/astronaut/review');
    expect(detail.evidence.find((e: { id: string }) => e.id === evidenceId).status).toBe('판단에 사용');
    expect(detail.submission.risk.score).toBeGreaterThan(0);
    await expect(page.locator('.review-head .risk-score').textContent()).resolves.toBe(String(detail.submission.risk.score));
    await expect(page.locator('.decision-panel').textContent()).resolves.toContain("'판단에 사용' 근거 1건");
  });

  it('decides 반려 with a note and shows the new attention candidate on the watchlist', async () => {
    const { page, service } = await open(TWIN_ASTRONAUTS, '#/review/astronaut');
    await page.locator('.group-internal .evidence [data-status="판단에 사용"]').click();
    await page.locator('.group-internal .evidence [data-status="판단에 사용"][aria-pressed="true"]').waitFor();
    await page.locator('#decision-note').fill('무단 사용 의심');
    await page.locator('.decision-button[data-decision="반려"]').click();

    await page.locator('.current-decision.decision-reject').waitFor();
    await expect(page.locator('.current-decision').textContent()).resolves.toContain('현재 결정: 반려');
    await expect(page.locator('.current-decision').textContent()).resolves.toContain('무단 사용 의심');
    await expect(page.locator('.decision-button[data-decision="반려"]').getAttribute('aria-pressed')).resolves.toBe('true');
    await expect(page.locator('.review-head .decision').textContent()).resolves.toBe('반려');
    const stored = await service.api('GET', '/api/submissions/astronaut/review');
    expect(stored.submission.decision.value).toBe('반려');
    expect(stored.knowledge_entry.state).toBe('주의 후보');

    await page.locator('.knowledge-link a').click();
    const entry = page.locator(`.entry[data-entry-id="${stored.knowledge_entry.id}"]`);
    await entry.waitFor();
    await expect(page.locator('.tab[aria-current="page"]').textContent()).resolves.toContain('주의 후보');
    await expect(entry.locator('.entry-title').textContent()).resolves.toBe('astronaut');
    await expect(entry.locator('.badge.knowledge').textContent()).resolves.toBe('주의 후보');
    await entry.locator('.entry-evidence-item').first().waitFor();
    await expect(entry.locator('.entry-evidence-list').textContent()).resolves.toContain('astronaut copy');
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.entry img.entry-image');
      return !!img && img.complete && img.naturalWidth > 0;
    });
  });

  it('promotes an attention candidate into the confirmed watchlist', async () => {
    const { page, service } = await open(TWIN_ASTRONAUTS);
    const decided = await service.api('POST', '/api/submissions/astronaut/decision', { decision: '반려' });
    await page.goto(`${service.url}/#/watchlist`);
    const entry = page.locator(`.entry[data-entry-id="${decided.knowledge_entry.id}"]`);
    await entry.waitFor();

    await entry.locator('[data-action="확정 DB 편입"]').click();
    await page.waitForFunction(() => document.querySelector('.entry .badge.knowledge')?.textContent === '확정 DB 편입');
    await expect(entry.locator('[data-action="확정 DB 편입"]').count()).resolves.toBe(0);
    const confirmed = await service.api('GET', `/api/knowledge?state=${encodeURIComponent('확정 DB 편입')}`);
    expect(confirmed.entries.map((e: { id: string }) => e.id)).toEqual([decided.knowledge_entry.id]);

    await page.locator('.tab', { hasText: '확정 DB 편입' }).click();
    await page.locator(`.entry[data-entry-id="${decided.knowledge_entry.id}"]`).waitFor();
    await expect(page.locator('.tab[aria-current="page"] .count').textContent()).resolves.toBe('1');
  });

  it('switches a provider off, keeps it off after a reload, and disables all only after confirmation', async () => {
    const { page, service } = await open({}, '#/providers', false);
    const regionalSwitch = page.locator('[data-provider-id="regional"] [role="switch"]');
    await expect(regionalSwitch.getAttribute('aria-checked')).resolves.toBe('true');
    await regionalSwitch.click();
    await page.locator('[data-provider-id="regional"] [role="switch"][aria-checked="false"]').waitFor();
    let providers = (await service.api('GET', '/api/providers')).providers as { id: string; switched_on: boolean }[];
    expect(providers.find((p) => p.id === 'regional')!.switched_on).toBe(false);
    await page.reload();
    await page.locator('[data-provider-id="regional"] [role="switch"][aria-checked="false"]').waitFor();
    await expect(page.locator('[data-provider-id="regional"] .switch-text').textContent()).resolves.toBe('꺼짐');

    await page.locator('#emergency-disable').click();
    await page.locator('dialog.confirm-dialog[open]').waitFor();
    await page.locator('dialog.confirm-dialog button', { hasText: '취소' }).click();
    await page.locator('dialog.confirm-dialog').waitFor({ state: 'detached' });
    providers = (await service.api('GET', '/api/providers')).providers;
    expect(providers.find((p) => p.id === 'local_llm')!.switched_on).toBe(true);

    await page.locator('#emergency-disable').click();
    await page.locator('#confirm-emergency').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[role="switch"]')].every((s) => s.getAttribute('aria-checked') === 'false'));
    providers = (await service.api('GET', '/api/providers')).providers;
    expect(providers.every((p) => !p.switched_on)).toBe(true);

    await page.goto(`${service.url}/#/audit`);
    await page.locator('.audit-table tbody tr').first().waitFor();
    const actions = await page.locator('.audit-table tbody tr td:nth-child(3) .mono').allTextContents();
    expect(actions[0]).toBe('provider.emergency_disable');
    expect(actions).toContain('provider.switch');
    // Each line says who did it: the signed-in admin.
    await expect(page.locator('.audit-table tbody tr').first().locator('.audit-actor').textContent()).resolves.toBe(ACCOUNTS.admin.username);
  });

  it('lists the jobs on the audit page by status, and says so when none has the chosen one', async () => {
    const { page, service } = await open({ images: { 'chelsea.png': 'chelsea.png' } }, '#/audit?tab=jobs&status=done');
    const done = page.locator('.jobs-table tbody tr');
    await done.first().waitFor();
    expect(await page.locator('.jobs-table tbody tr:not(.job-done)').count()).toBe(0);
    await expect(done.locator('td:nth-child(3)').allTextContents()).resolves.toContain('chelsea');
    expect((await service.api('GET', '/api/jobs?status=failed')).jobs).toEqual([]);
    await page.locator('#jobs-status').selectOption('failed');
    await expect(page.locator('.empty').textContent()).resolves.toBe('작업이 없습니다.');
  });

  it('names the vendor serving the global search on the providers page', async () => {
    const { page } = await open({}, '#/providers', false, { GLOBAL_SEARCH_PROVIDER: 'brave' });
    const card = page.locator('[data-provider-id="global_search"]');
    await expect(card.locator('.provider-vendor').textContent()).resolves.toBe('Brave Search');
    await expect(card.locator('.provider-reason').textContent()).resolves.toBe('사유: missing env: BRAVE_SEARCH_API_KEY');
    await expect(page.locator('[data-provider-id="regional"] .provider-vendor').count()).resolves.toBe(0);
  });

  it('an operator signs in, sees no admin screens, and is told in words when an admin action is refused', async () => {
    service = await session.start();
    opened = await session.open(service, '#/providers', 'operator');
    const { page } = opened;
    await expect(page.locator('.account-name').textContent()).resolves.toBe(`${ACCOUNTS.operator.username} (operator)`);
    await expect(page.locator('a[data-route="accounts"]').isHidden()).resolves.toBe(true);
    await page.locator('[data-provider-id="regional"] [role="switch"]').click();
    await page.locator('.toast-error', { hasText: '권한이 없습니다' }).waitFor();
    const providers = (await service.api('GET', '/api/providers')).providers as { id: string; switched_on: boolean }[];
    expect(providers.find((p) => p.id === 'regional')!.switched_on).toBe(true);
    // Signing out ends the session: the sign-in page comes back and the API refuses the old cookie.
    await page.locator('#sign-out').click();
    await page.locator('#signin-username').waitFor();
    const status = await page.evaluate(async () => (await fetch('/api/review-queue')).status);
    expect(status).toBe(401);
  });

  it('shows an admin the quota alert as a banner and on the providers page', async () => {
    const world = await session.world();
    service = await session.start({ settings: { ...world.settings, SVC_REGIONAL_DAILY_LIMIT: '1' } });
    await service.api('POST', '/api/search/manual', { provider: 'regional', query: 'lunar module' });
    opened = await session.open(service, '#/providers');
    const { page } = opened;
    await page.locator('#alert-banner', { hasText: '한도 도달 (1/1)' }).waitFor();
    await page.locator('.quota-alerts li[data-alert-provider="regional"][data-alert-threshold="100"]').waitFor();
    await expect(page.locator('.quota-alerts li[data-alert-threshold="100"]').textContent()).resolves.toContain('웹훅 없음');
  });

  it('on a fresh data folder offers the first-administrator page, then the desk; a wrong password is refused in words', async () => {
    service = await session.start({ accounts: [] });
    const page = await session.blank();
    opened = { page, dialogs: [], errors: [] };
    await page.goto(`${service.url}/#/queue`);
    await page.locator('form.signin h1', { hasText: '첫 관리자' }).waitFor();
    await page.locator('#signin-username').fill('first-admin');
    await page.locator('#signin-password').fill('a long first password');
    await page.locator('#signin-confirm').fill('a long first password');
    await page.locator('#signin-submit').click();
    await page.locator('#sign-out').waitFor();
    await expect(page.locator('a[data-route="accounts"]').isVisible()).resolves.toBe(true);
    await page.locator('#sign-out').click();
    await page.locator('#signin-username').fill('first-admin');
    await page.locator('#signin-password').fill('not the password');
    await page.locator('#signin-submit').click();
    await page.locator('.signin-message', { hasText: '맞지 않거나' }).waitFor();
  });

  it('shows a title made of markup as text and runs nothing', async () => {
    const { page } = await open({
      images: { 'coffee.png': 'coffee.png' },
      registry: [{ id: 'xss-title', title: XSS_TITLE, file: 'images/coffee.png', width: 400, height: 400, submitted_at: '2026-11-20 09:30' }],
    });
    const title = page.locator('.queue-row[data-submission-id="xss-title"] .queue-title');
    await expect(title.textContent()).resolves.toBe(XSS_TITLE);
    await expect(page.locator('.queue-row[data-submission-id="xss-title"] .title-cell img').count()).resolves.toBe(0);

    await title.click();
    await expect(page.locator('h1.review-title').textContent()).resolves.toBe(XSS_TITLE);
    await expect(page.locator('h1.review-title img').count()).resolves.toBe(0);
    await expect(page.evaluate(() => document.querySelectorAll('img[src="x"], [onerror]').length)).resolves.toBe(0);
    expect(opened.dialogs).toEqual([]);
    expect(opened.errors).toEqual([]);
  });

  it('tells the operator about API errors in words and keeps working', async () => {
    const { page, service } = await open(TWIN_ASTRONAUTS, '#/review/no-such-submission');
    const panel = page.locator('.error-panel');
    await panel.waitFor();
    await expect(panel.textContent()).resolves.toContain('찾을 수 없습니다');
    await expect(panel.textContent()).resolves.toContain('[not_found]');

    await page.locator('.mainnav a[data-route="queue"]').click();
    await page.waitForFunction(() => document.querySelectorAll('.queue-row').length === 2);

    await page.locator('.queue-title', { hasText: /^astronaut$/ }).click();
    const button = page.locator('.group-internal .evidence [data-status="보류"]');
    await button.waitFor();
    await service.server.stop();
    await button.click();
    const toast = page.locator('.toast-error');
    await toast.waitFor();
    await expect(toast.textContent()).resolves.toContain('연결할 수 없습니다');
    await expect(button.isEnabled()).resolves.toBe(true);
    await expect(page.locator('h1.review-title').textContent()).resolves.toBe('astronaut');
  });

  it('shows web evidence with its downloaded copy, and the summary links to the evidence it cites', async () => {
    const world = await session.world();
    service = await session.start({ seed: { images: { 'astronaut.png': 'astronaut.png' } }, settings: world.settings });
    await service.api('POST', '/api/submissions/reload');
    await waitForEnrichment(service, ['astronaut']);
    opened = await session.open(service, '#/review/astronaut');
    const { page } = opened;

    const match = page.locator('.group-web_match .evidence').first();
    await match.waitFor();
    await expect(match.locator('.similarity').textContent()).resolves.toBe('100.0%');
    await page.waitForFunction(() => {
      const copy = document.querySelector<HTMLImageElement>('.group-web_match .compare figure:nth-child(2) img');
      return !!copy && copy.getAttribute('src')!.startsWith('/media/evidence/') && copy.complete && copy.naturalWidth > 0;
    });

    // The gallery page kept when it was matched: its capture is listed and opens as text; keeping it again adds one.
    const kept = page.locator('.group-web_match .evidence', { has: page.locator('.capture-list') }).first();
    await expect(kept.locator('.capture-list li').first().textContent()).resolves.toMatch(/페이지 보존 .* · HTTP 200 · SHA-256 [0-9a-f]{12}…/);
    await expect(kept.locator('a.capture-link').first().getAttribute('href')).resolves.toMatch(/^\/api\/captures\/pc_/);
    const keptId = await kept.getAttribute('data-evidence-id');
    await kept.locator('.capture-button').click();
    await page.locator(`[data-evidence-id="${keptId}"] .capture-list li:nth-child(2)`).waitFor();
    const captures = (await service.api('GET', '/api/submissions/astronaut/review')).captures.filter((c: { evidence_id: string }) => c.evidence_id === keptId);
    expect(captures).toHaveLength(2);

    // A match names the page that holds it: found on 1 page, its kept copy opening as text.
    const found = page.locator('.group-web_match .evidence .copy-pages').first();
    await expect(found.locator('summary').textContent()).resolves.toBe('1개 페이지에서 발견');
    await expect(found.locator('.copy-page-list a.capture-link').first().getAttribute('href')).resolves.toMatch(/^\/api\/captures\/pc_/);

    const summary = page.locator('.group-supporting .evidence.supporting').first();
    await expect(summary.locator('.summary-text').textContent()).resolves.toContain('같은 사진을 가리킵니다');
    const cite = summary.locator('.summary-text .evidence-ref').first();
    const citedId = (await cite.textContent())!.replace(/[[\]]/g, '');
    await cite.click();
    await page.locator(`[data-evidence-id="${citedId}"].highlight`).waitFor();
    await expect(page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.evidenceId)).resolves.toBe(citedId);
    await expect(page.locator('a[href^="javascript:"]').count()).resolves.toBe(0);
    expect(opened.dialogs).toEqual([]);
  });

  it('reruns enrichment with face crops, showing progress until the answer arrives', async () => {
    const world = await session.world();
    service = await session.start({ seed: { images: { 'astronaut.png': 'astronaut.png' } }, settings: world.settings });
    await service.api('POST', '/api/submissions/reload');
    await waitForEnrichment(service, ['astronaut']);
    opened = await session.open(service, '#/review/astronaut');
    const { page } = opened;
    await page.locator('.evidence').first().waitFor();

    // The rerun sends the whole image first, then the one face crop; the crop is found on another page.
    const full = world.vision.detection;
    let visionCalls = 0;
    world.vision.detection = (image) =>
      ++visionCalls === 2
        ? {
            webEntities: [{ description: 'Astronaut face close-up', score: 0.7 }],
            pagesWithMatchingImages: [{ url: world.web.urlFor('/crew'), pageTitle: '우주비행사 얼굴 사진' }],
          }
        : typeof full === 'function'
          ? full(image)
          : full;
    // The language model answers only when the test says so, so the running state can be seen.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    world.llm.respondOnce(async (request) => {
      await held;
      const prompt = String((request.json as { prompt: string }).prompt);
      const id = /"id":"(ev_[a-z0-9]+)"/.exec(prompt)![1];
      return { json: { model: 'fake', response: `재분석 요약 [${id}].`, done: true } };
    });

    await page.locator('#rerun-face-crop').check();
    await page.locator('#rerun-enrichment').click();
    await page.locator('.rerun-progress.running').waitFor();
    await expect(page.locator('#rerun-enrichment').isDisabled()).resolves.toBe(true);
    await expect(page.locator('.rerun-progress').textContent()).resolves.toContain('재분석 진행 중');
    answer();

    await page.waitForFunction(() => document.querySelector('.rerun-progress')?.textContent?.includes('최근 재분석'));
    await page.locator('.evidence .badge.face-crop').first().waitFor();
    const detail = await service.api('GET', '/api/submissions/astronaut/review');
    expect(detail.evidence.some((e: { face_crop: boolean; title: string }) => e.face_crop && e.title === 'Astronaut face close-up')).toBe(true);
    const audit = await service.api('GET', '/api/audit-events');
    expect(audit.events[0]).toMatchObject({ action: 'submission.rerun', target_id: 'astronaut', details: { face_crop: true } });
  });

  it('runs a manual search, shows the results as image cards and stores them for the chosen submission', async () => {
    const world = await session.world();
    const { page } = await open({ images: { 'rocket.jpg': 'rocket.jpg' } }, '#/search?submission=rocket', true, world.settings);
    await expect(page.locator('#search-submission').inputValue()).resolves.toBe('rocket');
    await page.locator('#search-provider').selectOption('regional');
    await page.locator('#search-type').selectOption('image');
    await page.locator('#search-query').fill('로켓 발사');
    await page.locator('.search-form button[type="submit"]').click();

    const cards = page.locator('.result-card');
    await page.waitForFunction(() => document.querySelectorAll('.result-card').length === 2);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('.result-card img')].every((img) => img.complete && img.naturalWidth > 0));
    const titles = await cards.locator('.result-title').allTextContents();
    expect(titles).toContain('로켓 발사');
    expect(titles.every((t) => !t.includes('<'))).toBe(true);
    await expect(page.locator('.result-card img[src="x"]').count()).resolves.toBe(0);
    expect(world.regional.searches('image').map((r) => r.query.query)).toContain('로켓 발사');

    await page.locator('.search-results a[href="#/review/rocket"]').click();
    const stored = page
      .locator('.group-web_match .evidence', { hasText: 'manual_image_result' })
      .filter({ has: page.locator('.evidence-title', { hasText: /^로켓 발사$/ }) });
    await stored.waitFor();
    await expect(stored.locator('.query').textContent()).resolves.toBe('로켓 발사');
    await expect(stored.locator('.similarity').textContent()).resolves.toBe('100.0%');
  });
  it('shows the API reference from the served OpenAPI document: every route, its role, parameters and fields', async () => {
    const { page, service } = await open({ images: {} }, '#/api', false);
    const served = await service.api('GET', '/api/openapi.json');
    const count = Object.values(served.paths).reduce((n: number, methods) => n + Object.keys(methods as object).length, 0);
    await page.waitForFunction((n) => document.querySelectorAll('.api-operation').length === n, count);
    const queue = page.locator('.api-operation[data-operation="get /api/review-queue"]');
    await queue.locator('summary').click();
    await expect(queue.locator('summary').textContent()).resolves.toContain('운영자');
    await expect(queue.locator('.api-fields').first().textContent()).resolves.toContain('cursor');
    await expect(queue.textContent()).resolves.toContain('next_cursor');
    const decision = page.locator('.api-operation[data-operation="post /api/submissions/{id}/decision"]');
    await decision.locator('summary').click();
    await expect(decision.textContent()).resolves.toContain('"승인" | "보류" | "반려"');
  });
});
