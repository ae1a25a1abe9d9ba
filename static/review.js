// Review of one submission: the image with its face and person boxes, fingerprint, risk and signals,
// evidence in its groups with the four operator statuses, the supporting summary, failures, the
// decision and the rerun of enrichment. Actions update the parts they change in place so keyboard
// focus stays. The parts live in review-*.js; this page holds the state they share.
import { api } from './api.js';
import { h, append, hashLink, clear } from './dom.js';
import { riskBadge, decisionBadge, enrichmentBadge, attentionBadge, loading, errorPanel, toast, SOURCE_LABEL } from './ui.js';
import { reviewFigure } from './review-figure.js';
import { factsPanel, paintRiskPanel } from './review-facts.js';
import { paintDecisionPanel, rerunPanel } from './review-decision.js';
import { paintEvidenceColumn, replaceEvidenceCard, orderGroups } from './review-evidence.js';

export async function renderReview(view) {
  const id = view.params[0];
  append(view.root, loading());
  let data;
  try {
    data = await api.review(id);
  } catch (error) {
    clear(
      view.root,
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
    append(
      this.view.root,
      this.slots.head,
      h(
        'div',
        { class: 'review-layout' },
        h(
          'div',
          { class: 'review-side' },
          reviewFigure(s),
          factsPanel(s, this.evidence.size),
          this.slots.risk,
          this.slots.decision,
          rerunPanel(this),
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
    clear(
      this.slots.head,
      h('p', { class: 'crumbs' }, hashLink(['queue'], '← 검토 대기열 (queue)')),
      h(
        'div',
        { class: 'review-title-row' },
        h('h1', { class: 'review-title' }, s.title || '(제목 없음)'),
        h(
          'div',
          { class: 'badges' },
          riskBadge(s.risk),
          decisionBadge(s.decision),
          enrichmentBadge(s.enrichment_status),
          s.attention_match ? attentionBadge() : null,
        ),
      ),
      h('p', { class: 'muted mono' }, s.id),
    );
  }

  paintRisk() {
    paintRiskPanel(this);
  }

  paintDecision() {
    paintDecisionPanel(this);
  }

  paintEvidence() {
    paintEvidenceColumn(this);
  }

  replaceCard(ev) {
    return replaceEvidenceCard(this, ev);
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

  /** The page drawn again from a fresh review answer, with the evidence just added marked. */
  remount(data, addedIds, seconds) {
    clear(this.view.root);
    const page = new ReviewPage(this.view, data);
    page.mount();
    page.markAdded(addedIds, seconds);
  }

  markAdded(ids, seconds) {
    const progress = this.view.root.querySelector('.rerun-progress');
    if (progress) progress.textContent = `최근 재분석: 근거 ${ids.length}건 추가 (${seconds}초)`;
    for (const id of ids) this.cards.get(id)?.classList.add('is-new');
  }
}

/** The case bundle (ZIP) of a submission: a same-origin download, set as a property like every link. */
function bundleLink(id) {
  const a = h('a', { class: 'button', id: 'case-bundle', download: '' }, '증거 묶음 내려받기 (case bundle ZIP)');
  a.href = `/api/submissions/${encodeURIComponent(id)}/bundle`;
  return a;
}
