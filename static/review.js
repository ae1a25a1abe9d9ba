// Review of one submission: the image with its face and person boxes, fingerprint, risk and signals, evidence in
// its groups with the four operator statuses, the supporting summary, failures, the decision and
// the rerun of enrichment. Actions update the parts they change in place so keyboard focus stays.
import { api } from './api.js';
import { h, append, hashLink, externalLink, image, actionButton, clear, percent, formatInstant, formatBytes } from './dom.js';
import {
  state, riskBadge, decisionBadge, enrichmentBadge, attentionBadge, statusBadge, knowledgeStateBadge, attempt,
  loading, errorPanel, emptyState, toast, refreshSummary, SOURCE_LABEL, STATUS_CLASS, DECISION_CLASS, ANALYSIS_LABEL,
} from './ui.js';

const ATTENTION = 'attention';
const SUPPORTING = 'supporting';
const FAILURES = 'failures';

export async function renderReview(view) {
  const id = view.params[0];
  append(view.root, loading());
  let data;
  try {
    data = await api.review(id);
  } catch (error) {
    clear(view.root, 
      h('p', {}, hashLink(['queue'], '← 검토 대기열')),
      errorPanel(error, () => renderAgain(view)),
    );
    return;
  }
  if (!view.isCurrent()) return;
  clear(view.root);
  new ReviewPage(view, data).mount(view.query.get('evidence'));
}

function renderAgain(view) {
  clear(view.root);
  return renderReview(view);
}

class ReviewPage {
  constructor(view, data) {
    this.view = view;
    this.submission = data.submission;
    this.knowledgeEntry = data.knowledge_entry ?? null;
    this.evidence = new Map((data.evidence ?? []).map((e) => [e.id, e]));
    this.captures = Array.isArray(data.captures) ? data.captures : [];
    this.groups = orderGroups(data.groups ?? []);
    this.cards = new Map();
    this.slots = {
      head: h('div', { class: 'review-head' }),
      risk: h('section', { class: 'panel risk-panel', 'aria-labelledby': 'risk-title' }),
      decision: h('section', { class: 'panel decision-panel', 'aria-labelledby': 'decision-title' }),
      evidence: h('div', { class: 'evidence-column' }),
    };
  }

  mount(focusEvidenceId) {
    const s = this.submission;
    append(this.view.root, 
      this.slots.head,
      h('div', { class: 'review-layout' },
        h('div', { class: 'review-side' },
          this.figure(),
          this.facts(),
          this.slots.risk,
          this.slots.decision,
          this.rerunPanel(),
          h('p', {}, bundleLink(s.id)),
          h('p', { class: 'small' }, hashLink(['search'], '이 제출물로 수동 검색 →', {}, { submission: s.id })),
        ),
        this.slots.evidence,
      ),
    );
    this.paintHead();
    this.paintRisk();
    this.paintDecision();
    this.paintEvidence();
    if (focusEvidenceId) this.focusEvidence(focusEvidenceId);
  }

  paintHead() {
    const s = this.submission;
    clear(this.slots.head, 
      h('p', { class: 'crumbs' }, hashLink(['queue'], '← 검토 대기열 (queue)')),
      h('div', { class: 'review-title-row' },
        h('h1', { class: 'review-title' }, s.title || '(제목 없음)'),
        h('div', { class: 'badges' }, riskBadge(s.risk), decisionBadge(s.decision), enrichmentBadge(s.enrichment_status), s.attention_match ? attentionBadge() : null),
      ),
      h('p', { class: 'muted mono' }, s.id),
    );
  }

  figure() {
    const s = this.submission;
    const img = image(s.media_url, `제출 이미지: ${s.title ?? s.id}`, { class: 'review-image', loading: 'eager' });
    // People under faces: a person box usually holds a face box, which stays on top and readable.
    const layers = [boxLayer('person', s.people), boxLayer('face', s.faces)];
    const drawBoxes = (width, height) => { for (const layer of layers) layer.draw(width, height); };
    if (s.width && s.height) drawBoxes(s.width, s.height);
    else if (img.tagName === 'IMG') img.addEventListener('load', () => drawBoxes(img.naturalWidth, img.naturalHeight), { once: true });
    const frame = h('div', { class: 'figure-frame' }, img, layers.map((layer) => layer.overlay));
    return h('figure', { class: 'panel review-figure' },
      frame,
      h('figcaption', { class: 'box-legend' }, [...layers].reverse().map((layer) => h('div', {}, layer.caption))),
    );
  }

  facts() {
    const s = this.submission;
    const row = (label, value, cls) => [h('dt', {}, label), h('dd', { class: cls }, value ?? '—')];
    return h('section', { class: 'panel facts', 'aria-label': '제출물 정보' },
      h('dl', { class: 'facts-grid' },
        row('지문 (pHash)', s.phash, 'mono phash'),
        row('제출 시각', s.submitted_at),
        row('크기', s.width && s.height ? `${s.width} × ${s.height}px` : null),
        row('형식 / 용량', `${s.format ?? '—'} · ${formatBytes(s.bytes)}`),
        row('분석', ANALYSIS_LABEL[s.analysis_status] ?? s.analysis_status),
        row('근거 수', String(s.evidence_count ?? this.evidence.size)),
        row('파일', s.file, 'mono small'),
        row('SHA-256', s.sha256, 'mono small break'),
      ),
    );
  }

  paintRisk() {
    const risk = this.submission.risk ?? {};
    const signals = Array.isArray(risk.signals) ? risk.signals : [];
    clear(this.slots.risk, 
      h('div', { class: 'panel-head' }, h('h2', { id: 'risk-title' }, '위험도 ', h('span', { class: 'en' }, 'Risk')), riskBadge(risk)),
      h('div', { class: ['risk-meter', `risk-${risk.level ?? 'low'}`], role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': String(risk.score ?? 0), 'aria-label': '위험 점수' },
        meterFill(risk.score ?? 0)),
      signals.length
        ? h('ul', { class: 'signals' }, signals.map((signal) => h('li', {},
          h('span', { class: 'signal-weight' }, `+${signal.weight}`),
          h('span', { class: 'signal-label' }, signal.label ?? signal.code),
          h('span', { class: 'muted mono small' }, ` ${signal.code}`),
          (signal.evidence_ids ?? []).length ? h('div', { class: 'signal-evidence' }, (signal.evidence_ids ?? []).map((eid) => this.evidenceRef(eid))) : null,
        )))
        : h('p', { class: 'muted' }, '위험 신호 없음'),
    );
  }

  /** A button that brings a cited evidence item into view and highlights it. */
  evidenceRef(evidenceId, shortLabel) {
    const ev = this.evidence.get(evidenceId);
    const label = shortLabel ?? (ev ? `${SOURCE_LABEL[ev.source] ?? ev.source}: ${ev.title || ev.url || evidenceId}` : evidenceId);
    const button = h('button', { type: 'button', class: 'evidence-ref', title: `근거 ${evidenceId}로 이동` }, label);
    button.addEventListener('click', () => this.focusEvidence(evidenceId));
    return button;
  }

  focusEvidence(evidenceId) {
    const card = this.cards.get(evidenceId);
    if (!card) {
      toast(`근거 ${evidenceId}를 이 화면에서 찾을 수 없습니다.`, 'error');
      return;
    }
    const folded = card.closest('details');
    if (folded) folded.open = true;
    card.scrollIntoView({ block: 'center', behavior: 'smooth' });
    card.focus({ preventScroll: true });
    card.classList.remove('highlight');
    void card.offsetWidth;
    card.classList.add('highlight');
  }

  paintDecision() {
    const s = this.submission;
    const current = s.decision?.value ?? null;
    const marked = [...this.evidence.values()].filter((e) => e.status === '판단에 사용').length;
    const note = h('textarea', { id: 'decision-note', rows: '2', maxlength: '2000', placeholder: '메모 (선택) — 결정 사유' });
    const buttons = state.decisions.map((value) => actionButton(value, async () => {
      const result = await attempt(`결정 '${value}'`, () => api.decide(s.id, value, note.value.trim() || undefined));
      if (!result) return;
      this.submission = result.submission;
      this.knowledgeEntry = result.knowledge_entry ?? this.knowledgeEntry;
      this.paintHead();
      this.paintDecision();
      refreshSummary();
      toast(result.knowledge_entry
        ? `'${value}'(으)로 결정했습니다. 주의 목록 항목: ${result.knowledge_entry.state}`
        : `'${value}'(으)로 결정했습니다.`, 'success');
      this.slots.decision.querySelector(`[data-decision="${CSS.escape(value)}"]`)?.focus();
    }, {
      class: ['decision-button', `decision-${DECISION_CLASS[value] ?? 'other'}`],
      'aria-pressed': String(current === value),
      dataset: { decision: value },
    }));
    const entry = this.knowledgeEntry;
    clear(this.slots.decision, 
      h('div', { class: 'panel-head' }, h('h2', { id: 'decision-title' }, '결정 ', h('span', { class: 'en' }, 'Decision'))),
      h('div', { class: ['current-decision', current ? `decision-${DECISION_CLASS[current] ?? 'other'}` : 'decision-none'] },
        current
          ? [h('strong', {}, `현재 결정: ${current}`), h('span', { class: 'muted small' }, ` ${formatInstant(s.decision.decided_at, state.timeZone)}`),
            s.decision.note ? h('p', { class: 'decision-note' }, s.decision.note) : null]
          : h('strong', {}, '아직 결정하지 않았습니다 (undecided)'),
      ),
      h('label', { for: 'decision-note', class: 'block-label' }, '메모 (note, 선택)'),
      note,
      h('div', { class: 'decision-buttons', role: 'group', 'aria-label': '결정' }, buttons),
      h('p', { class: 'muted small' }, `보류·반려는 지문과 '판단에 사용' 근거 ${marked}건으로 주의 후보를 만듭니다.`),
      entry
        ? h('p', { class: 'knowledge-link' }, '주의 목록 항목: ', knowledgeStateBadge(entry.state), ' ',
          hashLink(['watchlist'], '주의 목록에서 보기 →', {}, { state: entry.state, entry: entry.id }))
        : null,
    );
  }

  rerunPanel() {
    const s = this.submission;
    const faceCrop = h('input', { type: 'checkbox', id: 'rerun-face-crop' });
    const progress = h('div', { class: 'rerun-progress', role: 'status', 'aria-live': 'polite' });
    const button = actionButton('보강 다시 실행 (rerun enrichment)', async () => {
      const started = Date.now();
      const bar = h('progress', { class: 'busy' });
      const text = h('span', {}, '재분석 진행 중… 0초');
      clear(progress, bar, text);
      progress.classList.add('running');
      const timer = setInterval(() => { text.textContent = `재분석 진행 중… ${Math.round((Date.now() - started) / 1000)}초`; }, 1000);
      let result;
      try {
        result = await attempt('보강 다시 실행', () => api.rerunEnrichment(s.id, faceCrop.checked));
      } finally {
        clearInterval(timer);
        progress.classList.remove('running');
      }
      if (!result) {
        clear(progress, h('span', { class: 'text-error' }, '실패했습니다. 오류 메시지를 확인하세요.'));
        return;
      }
      const added = result.evidence_added ?? [];
      const seconds = Math.round((Date.now() - started) / 1000);
      toast(`보강 완료: 근거 ${added.length}건 추가 (${seconds}초)`, 'success');
      if (!this.view.isCurrent()) return;
      const fresh = await attempt('검토 다시 불러오기', () => api.review(s.id));
      if (!fresh || !this.view.isCurrent()) return;
      clear(this.view.root);
      const page = new ReviewPage(this.view, fresh);
      page.mount();
      page.markAdded(added.map((e) => e.id), seconds);
    }, { id: 'rerun-enrichment' });
    return h('section', { class: 'panel rerun-panel', 'aria-labelledby': 'rerun-title' },
      h('h2', { id: 'rerun-title' }, '재분석 ', h('span', { class: 'en' }, 'Re-analysis')),
      h('p', { class: 'muted small' }, '저장된 근거를 LLM에 요약시키고, 선택하면 얼굴 영역을 따로 웹 검출에 보냅니다. 얼굴 결과는 동일인 판단에 쓰지 않습니다.'),
      h('label', { for: 'rerun-face-crop', class: 'inline-check' }, faceCrop, ' 얼굴 영역 검색 (face crop)'),
      button,
      progress,
    );
  }

  markAdded(ids, seconds) {
    const progress = this.view.root.querySelector('.rerun-progress');
    if (progress) progress.textContent = `최근 재분석: 근거 ${ids.length}건 추가 (${seconds}초)`;
    for (const id of ids) this.cards.get(id)?.classList.add('is-new');
  }

  paintEvidence() {
    const column = clear(this.slots.evidence);
    this.cards.clear();
    append(column, h('h2', { class: 'evidence-heading' }, '근거 ', h('span', { class: 'en' }, 'Evidence'), h('span', { class: 'count' }, String(this.evidence.size))));
    const visible = this.groups.filter((g) => (g.evidence_ids ?? []).some((id) => this.evidence.has(id)));
    if (!visible.length) {
      append(column, emptyState('아직 모은 근거가 없습니다. 보강이 끝나면 여기에 나타납니다.'));
      return;
    }
    for (const group of visible) {
      const items = group.evidence_ids.map((id) => this.evidence.get(id)).filter(Boolean);
      const cards = items.map((ev) => this.card(ev, group.key));
      const heading = [group.label, h('span', { class: 'count' }, String(items.length))];
      if (group.key === FAILURES) {
        append(column, h('details', { class: 'evidence-group group-failures' },
          h('summary', {}, h('span', { class: 'group-title' }, heading), h('span', { class: 'muted small' }, ' — 펼쳐서 보기')),
          h('div', { class: 'group-items' }, cards)));
        continue;
      }
      append(column, h('section', { class: ['evidence-group', `group-${group.key}`], 'aria-label': group.label },
        h('h3', { class: 'group-title' }, heading),
        group.key === ATTENTION ? h('p', { class: 'group-note' }, '이전에 보류·반려된 이미지(주의 후보)와 일치합니다. 높은 위험 신호이며, 결정은 자동으로 바뀌지 않습니다.') : null,
        h('div', { class: 'group-items' }, cards)));
    }
  }

  card(ev, groupKey) {
    const el = groupKey === FAILURES ? this.failureCard(ev) : groupKey === SUPPORTING ? this.supportingCard(ev) : this.evidenceCard(ev);
    el.id = `evidence-${ev.id}`;
    el.dataset.evidenceId = ev.id;
    el.tabIndex = -1;
    this.cards.set(ev.id, el);
    return el;
  }

  replaceCard(ev) {
    const old = this.cards.get(ev.id);
    if (!old) return null;
    const groupKey = this.groups.find((g) => g.evidence_ids.includes(ev.id))?.key ?? ev.group;
    const fresh = this.card(ev, groupKey);
    old.replaceWith(fresh);
    return fresh;
  }

  evidenceCard(ev) {
    const remote = ev.image_url;
    const shown = ev.local_media_url || remote;
    const meta = [];
    const add = (label, value, cls) => { if (value !== null && value !== undefined && value !== '') meta.push(h('dt', {}, label), h('dd', { class: cls }, value)); };
    const how = ev.matched ? matchHow(ev) : null;
    add('일치 판정', how?.decided, 'deciding');
    add('유사도 (pHash)', typeof ev.similarity === 'number' ? percent(ev.similarity) : null, 'similarity');
    add('일치 방식', ev.matched ? (ev.match_transform ?? '일치') : null, 'mono');
    add('검색어', ev.query, 'query');
    add('신뢰도', typeof ev.confidence === 'number' ? percent(ev.confidence) : null);
    add('일치 제출물', ev.matched_submission_id ? hashLink(['review', ev.matched_submission_id], ev.matched_submission_id, { class: 'mono' }) : null);
    add('주의 목록 항목', ev.knowledge_entry_id, 'mono small');
    add('원격 이미지', remote ? externalLink(remote, remote, { class: 'small break' }) : null);
    return h('article', { class: ['evidence', ev.matched && 'is-matched', ev.status && `status-${STATUS_CLASS[ev.status] ?? 'other'}`, !ev.counts_toward_score && 'not-counted'] },
      h('header', { class: 'evidence-head' },
        h('span', { class: ['badge', 'source', `source-${ev.source}`] }, SOURCE_LABEL[ev.source] ?? ev.source),
        ev.kind ? h('span', { class: 'muted small' }, ev.kind) : null,
        how ? h('span', { class: 'badge matched', title: ev.match_transform ? `일치 방식: ${ev.match_transform}` : null }, `일치${how.name ? ` · ${how.name}` : ''}`) : null,
        ev.face_crop ? h('span', { class: 'badge face-crop', title: '얼굴 영역 검색 결과 — 동일인 판단에 쓰지 않음' }, '얼굴 영역') : null,
        statusBadge(ev.status),
        h('span', { class: ['small', ev.counts_toward_score ? 'counts' : 'muted'] }, ev.counts_toward_score ? '점수 반영' : '점수 제외'),
      ),
      h('div', { class: 'evidence-body' },
        shown
          ? h('div', { class: 'compare' },
            h('figure', {}, outlined(image(this.submission.media_url, '제출 이미지', { class: 'compare-img' }), how?.region?.submission), h('figcaption', {}, '제출')),
            h('figure', {}, outlined(image(shown, ev.title ? `근거 이미지: ${ev.title}` : '근거 이미지', { class: 'compare-img' }), how?.region?.candidate),
              h('figcaption', {}, ev.local_media_url ? '근거 (내려받은 사본)' : '근거 (원격)')))
          : null,
        h('div', { class: 'evidence-info' },
          h('h4', { class: ['evidence-title', !ev.title && 'muted'] }, ev.title || '(제목 없음)'),
          ev.text ? h('p', { class: 'evidence-text' }, ev.text) : null,
          ev.url ? h('p', { class: 'evidence-url' }, externalLink(ev.url, ev.url, { class: 'break' })) : null,
          meta.length ? h('dl', { class: 'evidence-meta' }, meta) : null,
          this.pageCaptures(ev),
          this.statusButtons(ev),
        ),
      ),
    );
  }

  /**
   * The kept copies of a web evidence item's page: when, what the server answered and the hash of
   * the stored bytes, each openable as plain text; and a button to keep the page again now.
   */
  pageCaptures(ev) {
    if (!hasOwnPage(ev)) return null;
    const kept = this.captures.filter((c) => c.evidence_id === ev.id);
    const line = (c) => {
      const about = `페이지 보존 ${formatInstant(c.fetched_at, state.timeZone)} · HTTP ${c.http_status} · SHA-256 ${String(c.sha256).slice(0, 12)}…`;
      if (!c.media_url) return h('li', { class: 'small' }, about, h('span', { class: 'muted' }, ' · 보존 기한이 지나 파일 삭제됨'));
      // Same-origin, set as a property like every link; served as text, never as a page.
      const open = h('a', { class: 'capture-link', target: '_blank', rel: 'noopener noreferrer' }, '보존본 보기 (텍스트)');
      open.href = c.media_url;
      return h('li', { class: 'small' }, about, ' · ', open);
    };
    const keep = actionButton(kept.length ? '페이지 다시 보존' : '페이지 보존', async () => {
      const result = await attempt('페이지 보존', () => api.captureEvidencePage(ev.id));
      if (!result) return;
      if (!result.capture) {
        const reason = result.evidence_added?.[0]?.error?.message ?? '알 수 없는 이유';
        toast(`페이지를 보존하지 못했습니다: ${reason} (수집 실패 근거로 기록됨)`, 'error');
        return;
      }
      this.captures.push(result.capture);
      this.replaceCard(ev)?.querySelector('.capture-button')?.focus();
      toast('페이지를 보존했습니다.', 'success');
    }, { class: 'capture-button' });
    return h('div', { class: 'page-captures' }, kept.length ? h('ul', { class: 'capture-list' }, kept.map(line)) : null, keep);
  }

  supportingCard(ev) {
    const cited = Array.isArray(ev.source_evidence_ids) ? ev.source_evidence_ids : [];
    const urls = Array.isArray(ev.source_urls) ? ev.source_urls : [];
    return h('article', { class: 'evidence supporting' },
      h('header', { class: 'evidence-head' },
        h('span', { class: ['badge', 'source', `source-${ev.source}`] }, SOURCE_LABEL[ev.source] ?? ev.source),
        h('span', { class: 'muted small' }, '보조 근거 · 점수 미반영 · 참고용 요약'),
        h('span', { class: 'muted small' }, formatInstant(ev.created_at, state.timeZone)),
      ),
      ev.title ? h('h4', { class: 'evidence-title' }, ev.title) : null,
      h('p', { class: 'summary-text' }, this.summaryWithRefs(ev.text ?? '')),
      cited.length ? h('div', { class: 'cited' }, h('span', { class: 'small' }, '인용한 근거: '), cited.map((id) => this.evidenceRef(id))) : null,
      urls.length ? h('ul', { class: 'cited-urls' }, urls.map((u) => h('li', {}, externalLink(u, u, { class: 'small break' })))) : null,
      this.statusButtons(ev),
    );
  }

  /** The summary cites evidence inline as `[id]` or `[id, id]`; known ids become jump buttons. */
  summaryWithRefs(text) {
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(/\[([^\[\]]{1,400})\]/g)) {
      const ids = match[1].split(',').map((t) => t.trim());
      if (!ids.every((id) => this.evidence.has(id))) continue;
      parts.push(text.slice(last, match.index), ids.map((id) => this.evidenceRef(id, `[${id}]`)));
      last = match.index + match[0].length;
    }
    parts.push(text.slice(last));
    return parts;
  }

  failureCard(ev) {
    return h('article', { class: 'evidence failure' },
      h('header', { class: 'evidence-head' },
        h('span', { class: ['badge', 'source', `source-${ev.source}`] }, SOURCE_LABEL[ev.source] ?? ev.source),
        ev.kind ? h('span', { class: 'muted small' }, ev.kind) : null,
        h('span', { class: 'muted small' }, formatInstant(ev.created_at, state.timeZone)),
      ),
      h('p', {}, h('strong', { class: 'mono' }, ev.error?.code ?? 'error'), ' ', ev.error?.message ?? ev.title ?? ''),
      ev.text ? h('p', { class: 'small' }, ev.text) : null,
      ev.query ? h('p', { class: 'small' }, '검색어: ', h('span', { class: 'query' }, ev.query)) : null,
      ev.url ? h('p', { class: 'small' }, externalLink(ev.url, ev.url, { class: 'break' })) : null,
    );
  }

  statusButtons(ev) {
    const group = h('div', { class: 'status-buttons', role: 'group', 'aria-label': '근거 상태' });
    for (const value of state.statuses) {
      append(group, actionButton(value, async () => {
        const result = await attempt(`근거 상태 '${value}'`, () => api.setEvidenceStatus(ev.id, value));
        if (!result) return;
        this.evidence.set(result.evidence.id, result.evidence);
        if (result.submission) this.submission = result.submission;
        const fresh = this.replaceCard(result.evidence);
        this.paintHead();
        this.paintRisk();
        this.paintDecision();
        fresh?.querySelector(`[data-status="${CSS.escape(value)}"]`)?.focus();
        toast(`근거를 '${value}'(으)로 표시했습니다. 위험 점수 ${this.submission.risk?.score ?? '—'}`, 'success');
      }, {
        class: ['status-button', `status-${STATUS_CLASS[value] ?? 'other'}`],
        'aria-pressed': String(ev.status === value),
        dataset: { status: value },
      }));
    }
    return group;
  }
}

/**
 * The two kinds of boxes drawn over the review image, each in its own colour with its own toggle;
 * `face` keeps the class names and toggle id the console has always had.
 */
const BOX_KINDS = {
  face: {
    toggleId: 'toggle-faces', name: '얼굴',
    shown: (n) => ` 얼굴 영역 ${n}개 표시 (face boxes)`, none: '감지된 얼굴 없음 (no faces)',
  },
  person: {
    toggleId: 'toggle-people', name: '인물',
    shown: (n) => ` 인물 영역 ${n}개 표시 (person boxes)`, none: '감지된 인물 없음 (no people)',
    // A person box names the face found inside it (`face` is its index in `faces`).
    note: (item) => (Number.isInteger(item.face) ? ` · 얼굴 ${item.face + 1}` : ''),
  },
};

/**
 * One kind of box as an overlay over the image, drawn once the image's pixel size is known, and
 * the caption line that toggles it (with a colour swatch as its legend) or says there are none.
 */
function boxLayer(kind, list) {
  const spec = BOX_KINDS[kind];
  const items = Array.isArray(list) ? list : [];
  const overlay = h('div', { class: ['box-overlay', `${kind}-overlay`], 'aria-hidden': 'true', dataset: { boxes: kind } });
  const draw = (width, height) => {
    clear(overlay);
    if (!width || !height) return;
    items.forEach((item, i) => {
      const box = item.box ?? {};
      const score = typeof item.score === 'number' ? ` · ${item.score.toFixed(2)}` : '';
      const el = h('div', { class: `${kind}-box` }, h('span', { class: `${kind}-label` }, `${spec.name} ${i + 1}${score}${spec.note?.(item) ?? ''}`));
      // Percentages of the image's own pixel size keep the boxes in place at any displayed size.
      el.style.left = `${(box.x / width) * 100}%`;
      el.style.top = `${(box.y / height) * 100}%`;
      el.style.width = `${(box.width / width) * 100}%`;
      el.style.height = `${(box.height / height) * 100}%`;
      append(overlay, el);
    });
  };
  if (!items.length) return { overlay, draw, caption: h('span', { class: ['muted', `no-${kind}-boxes`] }, spec.none) };
  const toggle = h('input', { type: 'checkbox', id: spec.toggleId, checked: true });
  toggle.addEventListener('change', () => overlay.classList.toggle('hidden', !toggle.checked));
  const caption = h('label', { for: spec.toggleId, class: 'inline-check' },
    toggle, h('span', { class: ['legend-swatch', `swatch-${kind}`], 'aria-hidden': 'true' }), spec.shown(items.length));
  return { overlay, draw, caption };
}

/**
 * How a copy matched, in the operator's words. The names come from lib/images/robust.ts (an
 * orientation, then `trimmed` or `crop`) and lib/enrichment/verify.ts (`geometric`, confirmed by
 * local features); an unknown name is shown as it is stored.
 */
const ORIENTATION_NAME = {
  hflip: '좌우 반전', vflip: '상하 반전', rot180: '180° 회전', rot90: '90° 회전', rot270: '270° 회전',
  transpose: '대각선 대칭', transverse: '반대 대각선 대칭',
};
const REGION_STEP_NAME = { trimmed: '테두리 제거', crop: '잘라낸 부분', geometric: '영역 일치' };

/**
 * The badge name, the similarity that decided the match (named after the transform it was measured
 * under) and the matched region of each image, when it is well formed.
 */
function matchHow(ev) {
  const region = readRegion(ev.match_region);
  const inliers = Number.isInteger(ev.match_inliers) && ev.match_inliers >= 0 ? ev.match_inliers : null;
  const deciding = typeof ev.match_similarity === 'number' && Number.isFinite(ev.match_similarity) ? percent(ev.match_similarity) : null;
  const transform = readTransform(ev.match_transform);
  if (!transform) return { name: ev.match_transform ?? null, decided: null, region };
  const { orientation, step } = transform;
  const turned = ORIENTATION_NAME[orientation];
  // The picture as it stands: the pHash line already says it all, as before.
  if (!turned && !step) return { name: '원본 그대로', decided: null, region };
  const name = [turned, REGION_STEP_NAME[step]].filter(Boolean).join(' · ');
  // In a crop or a collage the region is a part of one picture only: that picture's share says how much matched.
  const area = region
    ? region.candidate.coverage < region.submission.coverage
      ? `근거 이미지 면적의 ${percent(region.candidate.coverage)}`
      : `제출 이미지 면적의 ${percent(region.submission.coverage)}`
    : null;
  let phrase;
  if (step === 'geometric') phrase = `${turned ? `${turned} 후 ` : ''}영역 일치`;
  else if (step === 'crop') phrase = deciding && `${turned ? `${turned} 후 ` : ''}잘라낸 부분 ${deciding}`;
  else if (step === 'trimmed') phrase = deciding && `${turned ? `${turned} · ` : ''}테두리 제거 후 ${deciding}`;
  else phrase = deciding && `${turned} 후 ${deciding}`;
  const parts = [
    phrase ? h('span', { class: 'deciding-similarity' }, phrase) : null,
    area ? h('span', { class: 'match-area' }, area) : null,
    inliers !== null ? h('span', { class: 'match-inliers' }, `특징점 ${inliers}개 일치`) : null,
    step === 'geometric' && deciding ? h('span', { class: 'match-agreement' }, `영역 화소 일치도 ${deciding}`) : null,
  ].filter(Boolean);
  const decided = parts.length ? parts.flatMap((part, i) => (i ? [' · ', part] : [part])) : null;
  return { name, decided, region };
}

/** `hflip+crop` -> { orientation: 'hflip', step: 'crop' }; null for a name the console does not know. */
function readTransform(value) {
  if (typeof value !== 'string') return null;
  if (value === 'identity') return { orientation: null, step: null };
  const parts = value.split('+');
  const orientation = Object.hasOwn(ORIENTATION_NAME, parts[0]) ? parts.shift() : null;
  const step = parts.length === 1 && Object.hasOwn(REGION_STEP_NAME, parts[0]) ? parts.shift() : null;
  return parts.length === 0 && (orientation || step) ? { orientation, step } : null;
}

/**
 * The stored match_region with every corner clamped into the image, or null when either side is
 * not 3 to 8 numeric corners and a numeric coverage (it is stored data, shown without a fuss).
 */
function readRegion(region) {
  const clamp = (n) => Math.min(1, Math.max(0, n));
  const area = (side) => {
    if (!side || !Array.isArray(side.quad) || side.quad.length < 3 || side.quad.length > 8) return null;
    if (typeof side.coverage !== 'number' || !Number.isFinite(side.coverage)) return null;
    const corner = (p) => (Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === 'number' && Number.isFinite(n)) ? p.map(clamp) : null);
    const quad = side.quad.map(corner);
    return quad.includes(null) ? null : { quad, coverage: clamp(side.coverage) };
  };
  const submission = area(region?.submission);
  const candidate = area(region?.candidate);
  return submission && candidate ? { submission, candidate } : null;
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The image with the matched region outlined over it. The SVG covers the image's element box and
 * its viewBox is the image's own pixel size, so `meet` scales and centres it exactly as
 * `object-fit: contain` does the picture; it is drawn once the image has loaded and knows that size.
 */
function outlined(img, area) {
  if (!area || img.tagName !== 'IMG') return img;
  const label = '일치 영역';
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'match-region');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
  const title = document.createElementNS(SVG, 'title');
  title.textContent = label;
  svg.append(title);
  const draw = () => {
    const [width, height] = [img.naturalWidth, img.naturalHeight];
    if (!width || !height) return;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const polygon = document.createElementNS(SVG, 'polygon');
    polygon.setAttribute('points', area.quad.map(([x, y]) => `${x * width},${y * height}`).join(' '));
    svg.append(polygon);
  };
  if (img.complete && img.naturalWidth) draw();
  else img.addEventListener('load', draw, { once: true });
  img.addEventListener('error', () => svg.remove(), { once: true });
  return h('span', { class: 'match-frame' }, img, svg);
}

/** A web evidence item with a page of its own (as lib/enrichment/capture.ts decides). */
function hasOwnPage(ev) {
  return ['regional', 'global_vision', 'global_search'].includes(ev.source) && ev.group !== 'failures' && !ev.supporting
    && /^https?:\/\//i.test(ev.url ?? '') && ev.url !== ev.image_url;
}

/** `주의 후보 근거` always comes first; the rest keep the server's order. */
function orderGroups(groups) {
  return [...groups.filter((g) => g.key === ATTENTION), ...groups.filter((g) => g.key !== ATTENTION)]
    .map((g) => ({ ...g, evidence_ids: Array.isArray(g.evidence_ids) ? g.evidence_ids : [] }));
}

function meterFill(score) {
  const fill = h('div', { class: 'risk-meter-fill' });
  fill.style.width = `${Math.max(0, Math.min(100, Number(score) || 0))}%`;
  return fill;
}

/** The case bundle (ZIP) of a submission: a same-origin download, set as a property like every link. */
function bundleLink(id) {
  const a = h('a', { class: 'button', id: 'case-bundle', download: '' }, '증거 묶음 내려받기 (case bundle ZIP)');
  a.href = `/api/submissions/${encodeURIComponent(id)}/bundle`;
  return a;
}
