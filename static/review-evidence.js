// The review page's evidence column: the groups in order (attention candidates first, failures
// folded), each evidence item as the card of its group.
import { h, append, clear } from './dom.js';
import { emptyState } from './ui.js';
import { evidenceCard, failureCard } from './review-evidence-card.js';
import { supportingCard } from './review-summary.js';

const ATTENTION = 'attention';
const SUPPORTING = 'supporting';
const FAILURES = 'failures';

/** Paints the evidence column of `page` (a review page); its cards are registered in `page.cards`. */
export function paintEvidenceColumn(page) {
  const column = clear(page.slots.evidence);
  page.cards.clear();
  append(
    column,
    h('h2', { class: 'evidence-heading' }, '근거 ', h('span', { class: 'en' }, 'Evidence'), h('span', { class: 'count' }, String(page.evidence.size))),
  );
  const visible = page.groups.filter((g) => (g.evidence_ids ?? []).some((id) => page.evidence.has(id)));
  if (!visible.length) {
    append(column, emptyState('아직 모은 근거가 없습니다. 보강이 끝나면 여기에 나타납니다.'));
    return;
  }
  for (const group of visible) {
    const items = group.evidence_ids.map((id) => page.evidence.get(id)).filter(Boolean);
    const cards = items.map((ev) => card(page, ev, group.key));
    const heading = [group.label, h('span', { class: 'count' }, String(items.length))];
    if (group.key === FAILURES) {
      append(
        column,
        h(
          'details',
          { class: 'evidence-group group-failures' },
          h('summary', {}, h('span', { class: 'group-title' }, heading), h('span', { class: 'muted small' }, ' — 펼쳐서 보기')),
          h('div', { class: 'group-items' }, cards),
        ),
      );
      continue;
    }
    append(
      column,
      h(
        'section',
        { class: ['evidence-group', `group-${group.key}`], 'aria-label': group.label },
        h('h3', { class: 'group-title' }, heading),
        group.key === ATTENTION
          ? h('p', { class: 'group-note' }, '이전에 보류·반려된 이미지(주의 후보)와 일치합니다. 높은 위험 신호이며, 결정은 자동으로 바뀌지 않습니다.')
          : null,
        h('div', { class: 'group-items' }, cards),
      ),
    );
  }
}

function card(page, ev, groupKey) {
  const el = groupKey === FAILURES ? failureCard(ev) : groupKey === SUPPORTING ? supportingCard(page, ev) : evidenceCard(page, ev);
  el.id = `evidence-${ev.id}`;
  el.dataset.evidenceId = ev.id;
  el.tabIndex = -1;
  page.cards.set(ev.id, el);
  return el;
}

/** Draws an evidence item's card again in place; the new card, or null when it is not shown. */
export function replaceEvidenceCard(page, ev) {
  const old = page.cards.get(ev.id);
  if (!old) return null;
  const groupKey = page.groups.find((g) => g.evidence_ids.includes(ev.id))?.key ?? ev.group;
  const fresh = card(page, ev, groupKey);
  old.replaceWith(fresh);
  return fresh;
}

/** `주의 후보 근거` always comes first; the rest keep the server's order. */
export function orderGroups(groups) {
  return [...groups.filter((g) => g.key === ATTENTION), ...groups.filter((g) => g.key !== ATTENTION)].map((g) => ({
    ...g,
    evidence_ids: Array.isArray(g.evidence_ids) ? g.evidence_ids : [],
  }));
}
