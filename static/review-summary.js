// The supporting summary on the review page: the language model's summary of the evidence, shown
// for reference only (it never counts toward the score), with its citations as jump buttons.
import { h, externalLink, formatInstant } from './dom.js';
import { state, sourceBadge } from './ui.js';
import { statusButtons } from './review-evidence-card.js';

/** The card of a supporting summary: its text with jump buttons, the evidence and addresses it cites. */
export function supportingCard(page, ev) {
  const cited = Array.isArray(ev.source_evidence_ids) ? ev.source_evidence_ids : [];
  const urls = Array.isArray(ev.source_urls) ? ev.source_urls : [];
  return h(
    'article',
    { class: 'evidence supporting' },
    h(
      'header',
      { class: 'evidence-head' },
      sourceBadge(ev.source),
      h('span', { class: 'muted small' }, '보조 근거 · 점수 미반영 · 참고용 요약'),
      h('span', { class: 'muted small' }, formatInstant(ev.created_at, state.timeZone)),
    ),
    ev.title ? h('h4', { class: 'evidence-title' }, ev.title) : null,
    h('p', { class: 'summary-text' }, summaryWithRefs(page, ev.text ?? '')),
    cited.length
      ? h(
          'div',
          { class: 'cited' },
          h('span', { class: 'small' }, '인용한 근거: '),
          cited.map((id) => page.evidenceRef(id)),
        )
      : null,
    urls.length
      ? h(
          'ul',
          { class: 'cited-urls' },
          urls.map((u) => h('li', {}, externalLink(u, u, { class: 'small break' }))),
        )
      : null,
    statusButtons(page, ev),
  );
}

/** The summary cites evidence inline as `[id]` or `[id, id]`; known ids become jump buttons. */
function summaryWithRefs(page, text) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(/\[([^[\]]{1,400})\]/g)) {
    const ids = match[1].split(',').map((t) => t.trim());
    if (!ids.every((id) => page.evidence.has(id))) continue;
    parts.push(
      text.slice(last, match.index),
      ids.map((id) => page.evidenceRef(id, `[${id}]`)),
    );
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}
