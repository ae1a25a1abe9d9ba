// One evidence card of the review page: the compared images with the matched region, what decided
// the match, the kept page copies and the four operator statuses; and the card of a failed call.
import { api } from './api.js';
import { h, append, hashLink, externalLink, image, actionButton, percent, formatInstant } from './dom.js';
import { state, statusBadge, attempt, toast, STATUS_CLASS, sourceBadge } from './ui.js';
import { matchHow, outlined } from './review-match.js';

/** The card of a found copy or candidate: both pictures side by side, how it matched, where it is, its status. */
export function evidenceCard(page, ev) {
  const remote = ev.image_url;
  const shown = ev.local_media_url || remote;
  const meta = [];
  const add = (label, value, cls) => {
    if (value !== null && value !== undefined && value !== '') meta.push(h('dt', {}, label), h('dd', { class: cls }, value));
  };
  const how = ev.matched ? matchHow(ev) : null;
  add('일치 판정', how?.decided, 'deciding');
  add('유사도 (pHash)', typeof ev.similarity === 'number' ? percent(ev.similarity) : null, 'similarity');
  add('일치 방식', ev.matched ? (ev.match_transform ?? '일치') : null, 'mono');
  add('검색어', ev.query, 'query');
  add('신뢰도', typeof ev.confidence === 'number' ? percent(ev.confidence) : null);
  add('일치 제출물', ev.matched_submission_id ? hashLink(['review', ev.matched_submission_id], ev.matched_submission_id, { class: 'mono' }) : null);
  add('주의 목록 항목', ev.knowledge_entry_id, 'mono small');
  add('원격 이미지', remote ? externalLink(remote, remote, { class: 'small break' }) : null);
  return h(
    'article',
    { class: ['evidence', ev.matched && 'is-matched', ev.status && `status-${STATUS_CLASS[ev.status] ?? 'other'}`, !ev.counts_toward_score && 'not-counted'] },
    h(
      'header',
      { class: 'evidence-head' },
      sourceBadge(ev.source),
      ev.kind ? h('span', { class: 'muted small' }, ev.kind) : null,
      how
        ? h(
            'span',
            { class: 'badge matched', title: ev.match_transform ? `일치 방식: ${ev.match_transform}` : null },
            `일치${how.name ? ` · ${how.name}` : ''}`,
          )
        : null,
      ev.face_crop ? h('span', { class: 'badge face-crop', title: '얼굴 영역 검색 결과 — 동일인 판단에 쓰지 않음' }, '얼굴 영역') : null,
      statusBadge(ev.status),
      h('span', { class: ['small', ev.counts_toward_score ? 'counts' : 'muted'] }, ev.counts_toward_score ? '점수 반영' : '점수 제외'),
    ),
    h(
      'div',
      { class: 'evidence-body' },
      shown
        ? h(
            'div',
            { class: 'compare' },
            h(
              'figure',
              {},
              outlined(image(page.submission.media_url, '제출 이미지', { class: 'compare-img' }), how?.region?.submission),
              h('figcaption', {}, '제출'),
            ),
            h(
              'figure',
              {},
              outlined(image(shown, ev.title ? `근거 이미지: ${ev.title}` : '근거 이미지', { class: 'compare-img' }), how?.region?.candidate),
              h('figcaption', {}, ev.local_media_url ? '근거 (내려받은 사본)' : '근거 (원격)'),
            ),
          )
        : null,
      h(
        'div',
        { class: 'evidence-info' },
        h('h4', { class: ['evidence-title', !ev.title && 'muted'] }, ev.title || '(제목 없음)'),
        ev.text ? h('p', { class: 'evidence-text' }, ev.text) : null,
        ev.url ? h('p', { class: 'evidence-url' }, externalLink(ev.url, ev.url, { class: 'break' })) : null,
        meta.length ? h('dl', { class: 'evidence-meta' }, meta) : null,
        pagesOfCopy(ev),
        pageCaptures(page, ev),
        statusButtons(page, ev),
      ),
    ),
  );
}

/**
 * The kept copies of a web evidence item's page: when, what the server answered and the hash of
 * the stored bytes, each openable as plain text; and a button to keep the page again now.
 */
function pageCaptures(page, ev) {
  if (!hasOwnPage(ev)) return null;
  // The pages linked to a match list their own captures (pagesOfCopy); these are of the item's own page.
  const kept = page.captures.filter((c) => c.evidence_id === ev.id && c.page_url === ev.url);
  const line = (c) => {
    const about = `페이지 보존 ${formatInstant(c.fetched_at, state.timeZone)} · HTTP ${c.http_status} · SHA-256 ${String(c.sha256).slice(0, 12)}…`;
    if (!c.media_url) return h('li', { class: 'small' }, about, h('span', { class: 'muted' }, ' · 보존 기한이 지나 파일 삭제됨'));
    // Same-origin, set as a property like every link; served as text, never as a page.
    const open = h('a', { class: 'capture-link', target: '_blank', rel: 'noopener noreferrer' }, '보존본 보기 (텍스트)');
    open.href = c.media_url;
    return h('li', { class: 'small' }, about, ' · ', open);
  };
  const keep = actionButton(
    kept.length ? '페이지 다시 보존' : '페이지 보존',
    async () => {
      const result = await attempt('페이지 보존', () => api.captureEvidencePage(ev.id));
      if (!result) return;
      if (!result.capture) {
        const reason = result.evidence_added?.[0]?.error?.message ?? '알 수 없는 이유';
        toast(`페이지를 보존하지 못했습니다: ${reason} (수집 실패 근거로 기록됨)`, 'error');
        return;
      }
      page.captures.push(result.capture);
      page.replaceCard(ev)?.querySelector('.capture-button')?.focus();
      toast('페이지를 보존했습니다.', 'success');
    },
    { class: 'capture-button' },
  );
  return h('div', { class: 'page-captures' }, kept.length ? h('ul', { class: 'capture-list' }, kept.map(line)) : null, keep);
}

/**
 * The pages the provider names as holding a verified copy ("found on N pages"), each with its kept
 * copy opened as text, or why keeping it failed; when the list was cut, how many were kept.
 */
function pagesOfCopy(ev) {
  const pages = ev.pages ?? [];
  if (pages.length === 0) return null;
  const count = Math.max(ev.page_count ?? 0, pages.length);
  const line = (p) => {
    const parts = [externalLink(p.url, p.title || p.url, { class: 'break' })];
    if (p.capture?.media_url) {
      // Same-origin, set as a property like every link; served as text, never as a page.
      const open = h('a', { class: 'capture-link', target: '_blank', rel: 'noopener noreferrer' }, '보존본 보기');
      open.href = p.capture.media_url;
      parts.push(` · HTTP ${p.capture.http_status} · `, open);
    } else if (p.capture) parts.push(h('span', { class: 'muted' }, ` · HTTP ${p.capture.http_status} · 보존 기한이 지나 파일 삭제됨`));
    else if (p.error) parts.push(h('span', { class: 'muted' }, ` · 보존 실패: ${p.error.message || p.error.code}`));
    return h('li', { class: 'small' }, parts);
  };
  const cut = count > pages.length ? ` (앞의 ${pages.length}개 보존)` : '';
  return h(
    'details',
    { class: 'copy-pages', open: pages.length <= 3 },
    h('summary', { class: 'small' }, `${count}개 페이지에서 발견${cut}`),
    h('ul', { class: 'copy-page-list' }, pages.map(line)),
  );
}

/** The card of a call that failed: the error code and message, the query and the address it tried. */
export function failureCard(ev) {
  return h(
    'article',
    { class: 'evidence failure' },
    h(
      'header',
      { class: 'evidence-head' },
      sourceBadge(ev.source),
      ev.kind ? h('span', { class: 'muted small' }, ev.kind) : null,
      h('span', { class: 'muted small' }, formatInstant(ev.created_at, state.timeZone)),
    ),
    h('p', {}, h('strong', { class: 'mono' }, ev.error?.code ?? 'error'), ' ', ev.error?.message ?? ev.title ?? ''),
    ev.text ? h('p', { class: 'small' }, ev.text) : null,
    ev.query ? h('p', { class: 'small' }, '검색어: ', h('span', { class: 'query' }, ev.query)) : null,
    ev.url ? h('p', { class: 'small' }, externalLink(ev.url, ev.url, { class: 'break' })) : null,
  );
}

/** The four operator statuses of an evidence item; a change repaints what it moves (risk, decision). */
export function statusButtons(page, ev) {
  const group = h('div', { class: 'status-buttons', role: 'group', 'aria-label': '근거 상태' });
  for (const value of state.statuses) {
    append(
      group,
      actionButton(
        value,
        async () => {
          const result = await attempt(`근거 상태 '${value}'`, () => api.setEvidenceStatus(ev.id, value));
          if (!result) return;
          page.evidence.set(result.evidence.id, result.evidence);
          if (result.submission) page.submission = result.submission;
          const fresh = page.replaceCard(result.evidence);
          page.paintHead();
          page.paintRisk();
          page.paintDecision();
          fresh?.querySelector(`[data-status="${CSS.escape(value)}"]`)?.focus();
          toast(`근거를 '${value}'(으)로 표시했습니다. 위험 점수 ${page.submission.risk?.score ?? '—'}`, 'success');
        },
        {
          class: ['status-button', `status-${STATUS_CLASS[value] ?? 'other'}`],
          'aria-pressed': String(ev.status === value),
          dataset: { status: value },
        },
      ),
    );
  }
  return group;
}

/** A web evidence item with a page of its own (as lib/enrichment/capture.ts decides). */
function hasOwnPage(ev) {
  return (
    ['regional', 'global_vision', 'global_search'].includes(ev.source) &&
    ev.group !== 'failures' &&
    !ev.supporting &&
    /^https?:\/\//i.test(ev.url ?? '') &&
    ev.url !== ev.image_url
  );
}
