// The review page's decision panel (the four decisions with a note, the watchlist entry a decision
// made) and the re-analysis panel (rerun of enrichment, optionally with face crops).
import { api } from './api.js';
import { h, hashLink, actionButton, clear, formatInstant } from './dom.js';
import { state, knowledgeStateBadge, attempt, toast, refreshSummary, DECISION_CLASS } from './ui.js';

/** Paints the decision panel of `page` (a review page) from its current submission. */
export function paintDecisionPanel(page) {
  const s = page.submission;
  const current = s.decision?.value ?? null;
  const marked = [...page.evidence.values()].filter((e) => e.status === '판단에 사용').length;
  const note = h('textarea', { id: 'decision-note', rows: '2', maxlength: '2000', placeholder: '메모 (선택) — 결정 사유' });
  const buttons = state.decisions.map((value) =>
    actionButton(
      value,
      async () => {
        const result = await attempt(`결정 '${value}'`, () => api.decide(s.id, value, note.value.trim() || undefined));
        if (!result) return;
        page.submission = result.submission;
        page.knowledgeEntry = result.knowledge_entry ?? page.knowledgeEntry;
        page.paintHead();
        page.paintDecision();
        refreshSummary();
        toast(
          result.knowledge_entry ? `'${value}'(으)로 결정했습니다. 주의 목록 항목: ${result.knowledge_entry.state}` : `'${value}'(으)로 결정했습니다.`,
          'success',
        );
        page.slots.decision.querySelector(`[data-decision="${CSS.escape(value)}"]`)?.focus();
      },
      {
        class: ['decision-button', `decision-${DECISION_CLASS[value] ?? 'other'}`],
        'aria-pressed': String(current === value),
        dataset: { decision: value },
      },
    ),
  );
  const entry = page.knowledgeEntry;
  clear(
    page.slots.decision,
    h('div', { class: 'panel-head' }, h('h2', { id: 'decision-title' }, '결정 ', h('span', { class: 'en' }, 'Decision'))),
    h(
      'div',
      { class: ['current-decision', current ? `decision-${DECISION_CLASS[current] ?? 'other'}` : 'decision-none'] },
      current
        ? [
            h('strong', {}, `현재 결정: ${current}`),
            h('span', { class: 'muted small' }, ` ${formatInstant(s.decision.decided_at, state.timeZone)}`),
            s.decision.note ? h('p', { class: 'decision-note' }, s.decision.note) : null,
          ]
        : h('strong', {}, '아직 결정하지 않았습니다 (undecided)'),
    ),
    h('label', { for: 'decision-note', class: 'block-label' }, '메모 (note, 선택)'),
    note,
    h('div', { class: 'decision-buttons', role: 'group', 'aria-label': '결정' }, buttons),
    h('p', { class: 'muted small' }, `보류·반려는 지문과 '판단에 사용' 근거 ${marked}건으로 주의 후보를 만듭니다.`),
    entry
      ? h(
          'p',
          { class: 'knowledge-link' },
          '주의 목록 항목: ',
          knowledgeStateBadge(entry.state),
          ' ',
          hashLink(['watchlist'], '주의 목록에서 보기 →', {}, { state: entry.state, entry: entry.id }),
        )
      : null,
  );
}

/** The re-analysis panel; on success the page is drawn again with the evidence just added marked. */
export function rerunPanel(page) {
  const s = page.submission;
  const faceCrop = h('input', { type: 'checkbox', id: 'rerun-face-crop' });
  const progress = h('div', { class: 'rerun-progress', role: 'status', 'aria-live': 'polite' });
  const button = actionButton(
    '보강 다시 실행 (rerun enrichment)',
    async () => {
      const started = Date.now();
      const bar = h('progress', { class: 'busy' });
      const text = h('span', {}, '재분석 진행 중… 0초');
      clear(progress, bar, text);
      progress.classList.add('running');
      const timer = setInterval(() => {
        text.textContent = `재분석 진행 중… ${Math.round((Date.now() - started) / 1000)}초`;
      }, 1000);
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
      if (!page.view.isCurrent()) return;
      const fresh = await attempt('검토 다시 불러오기', () => api.review(s.id));
      if (!fresh || !page.view.isCurrent()) return;
      page.remount(
        fresh,
        added.map((e) => e.id),
        seconds,
      );
    },
    { id: 'rerun-enrichment' },
  );
  return h(
    'section',
    { class: 'panel rerun-panel', 'aria-labelledby': 'rerun-title' },
    h('h2', { id: 'rerun-title' }, '재분석 ', h('span', { class: 'en' }, 'Re-analysis')),
    h('p', { class: 'muted small' }, '저장된 근거를 LLM에 요약시키고, 선택하면 얼굴 영역을 따로 웹 검출에 보냅니다. 얼굴 결과는 동일인 판단에 쓰지 않습니다.'),
    h('label', { for: 'rerun-face-crop', class: 'inline-check' }, faceCrop, ' 얼굴 영역 검색 (face crop)'),
    button,
    progress,
  );
}
