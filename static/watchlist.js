// Watchlist: knowledge entries by state, each with its submission image and the evidence that made
// it, and the two operator moves (확정 DB 편입 / 오탐 제외).
import { api } from './api.js';
import { h, append, hashLink, externalLink, image, actionButton, clear, percent, formatInstant, routeHref, downloadLink } from './dom.js';
import {
  state,
  knowledgeStateBadge,
  attempt,
  loading,
  errorPanel,
  emptyState,
  toast,
  refreshSummary,
  knowledgeCount,
  describeError,
  KNOWLEDGE_STATES,
  KNOWLEDGE_STATE_CLASS,
  statusBadge,
  sourceBadge,
} from './ui.js';

const REVIEW_FETCH_CONCURRENCY = 4;

export async function renderWatchlist(view) {
  const selected = KNOWLEDGE_STATES.includes(view.query.get('state')) ? view.query.get('state') : KNOWLEDGE_STATES[0];
  const focusEntry = view.query.get('entry');
  const tabs = h('nav', { class: 'tabs', 'aria-label': '항목 상태' });
  const paintTabs = () =>
    clear(
      tabs,
      KNOWLEDGE_STATES.map((value) => {
        const count = knowledgeCount(state.bootstrap?.knowledge_counts, value);
        const a = hashLink(
          ['watchlist'],
          [value, h('span', { class: 'count' }, String(count))],
          {
            class: ['tab', `knowledge-${KNOWLEDGE_STATE_CLASS[value]}`],
            'aria-current': value === selected ? 'page' : undefined,
          },
          { state: value },
        );
        return a;
      }),
    );
  paintTabs();
  const list = h('div', { class: 'watchlist' }, loading());
  append(
    view.root,
    h(
      'div',
      { class: 'screen-head' },
      h('h1', {}, '주의 목록 ', h('span', { class: 'en' }, 'Watchlist / knowledge entries')),
      h('div', { class: 'toolbar' }, downloadLink('watchlist', {}, 'CSV 내보내기', { id: 'export-watchlist' })),
    ),
    h(
      'p',
      { class: 'muted' },
      '보류·반려 결정이 만든 주의 후보입니다. 확정하면 이후 유사도 분석의 확정 기준이 되고, 오탐으로 제외하면 내부 유사도 분석에서 빠집니다.',
    ),
    tabs,
    list,
  );

  let entries;
  try {
    entries = (await api.knowledge(selected)).entries ?? [];
  } catch (error) {
    clear(
      list,
      errorPanel(error, () => {
        location.hash = routeHref(['watchlist'], { state: selected });
      }),
    );
    return;
  }
  if (!entries.length) {
    clear(list, emptyState(`'${selected}' 상태의 항목이 없습니다.`));
    return;
  }
  const cards = entries.map((entry) =>
    entryCard(entry, async () => {
      await refreshSummary();
      paintTabs();
    }),
  );
  clear(
    list,
    cards.map((c) => c.el),
  );
  if (focusEntry) {
    const target = cards.find((c) => c.entry.id === focusEntry)?.el;
    target?.scrollIntoView({ block: 'center' });
    target?.classList.add('highlight');
  }
  await eachLimited(cards, REVIEW_FETCH_CONCURRENCY, async (card) => {
    try {
      card.fill(await api.review(card.entry.submission_id));
    } catch (error) {
      card.fail(error);
    }
  });
}

function entryCard(entry, onMoved) {
  let current = entry;
  const media = h('div', { class: 'entry-media' }, h('div', { class: 'img-missing' }, '…'));
  const info = h('div', { class: 'entry-info' });
  const evidenceSlot = h('div', { class: 'entry-evidence' }, loading('근거 불러오는 중…'));
  const actions = h('div', { class: 'entry-actions' });
  const el = h('article', { class: 'panel entry', dataset: { entryId: entry.id } }, media, h('div', { class: 'entry-body' }, info, evidenceSlot, actions));

  const paintInfo = (submission) => {
    clear(
      info,
      h(
        'div',
        { class: 'entry-title-row' },
        h(
          'h2',
          { class: 'entry-title' },
          submission
            ? hashLink(['review', current.submission_id], submission.title || '(제목 없음)')
            : hashLink(['review', current.submission_id], current.submission_id),
        ),
        knowledgeStateBadge(current.state),
      ),
      h(
        'dl',
        { class: 'facts-grid compact' },
        h('dt', {}, '제출물'),
        h('dd', { class: 'mono' }, current.submission_id),
        h('dt', {}, '결정'),
        h('dd', {}, current.decision ?? '—'),
        h('dt', {}, '지문 (pHash)'),
        h('dd', { class: 'mono phash' }, current.phash ?? '—'),
        h('dt', {}, '항목 ID'),
        h('dd', { class: 'mono small' }, current.id),
        h('dt', {}, '만든 때 / 바뀐 때'),
        h('dd', { class: 'small' }, `${formatInstant(current.created_at, state.timeZone)} / ${formatInstant(current.updated_at, state.timeZone)}`),
      ),
    );
  };

  const paintActions = () => {
    const move = (label, call, verb) =>
      actionButton(
        label,
        async () => {
          const result = await attempt(verb, () => call(current.id));
          if (!result) return;
          current = result.entry;
          el.classList.add('moved');
          paintInfo(lastSubmission);
          paintActions();
          toast(`${verb}: 항목이 '${current.state}' 상태가 되었습니다.`, 'success');
          await onMoved();
        },
        { class: label === '확정 DB 편입' ? 'primary' : 'danger-outline', dataset: { action: label } },
      );
    clear(
      actions,
      current.state !== '확정 DB 편입' ? move('확정 DB 편입', api.promote, '확정 DB 편입') : null,
      current.state !== '오탐 제외' ? move('오탐 제외', api.exclude, '오탐 제외') : null,
    );
  };

  let lastSubmission = null;
  paintInfo(null);
  paintActions();

  return {
    el,
    entry,
    fill(review) {
      lastSubmission = review.submission;
      clear(
        media,
        hashLink(
          ['review', current.submission_id],
          image(review.submission?.thumb_url ?? review.submission?.media_url, `제출 이미지: ${review.submission?.title ?? ''}`, { class: 'entry-image' }),
        ),
      );
      paintInfo(review.submission);
      const byId = new Map((review.evidence ?? []).map((e) => [e.id, e]));
      const used = (current.evidence_ids ?? []).map((id) => byId.get(id) ?? { id, missing: true });
      clear(
        evidenceSlot,
        h('h3', { class: 'small-heading' }, `이 항목을 만든 근거 ${used.length}건`),
        used.length
          ? h(
              'ul',
              { class: 'entry-evidence-list' },
              used.map((ev) => evidenceLine(current.submission_id, ev)),
            )
          : h('p', { class: 'muted small' }, '선택된 근거 없이 지문만으로 만들어졌습니다.'),
      );
    },
    fail(error) {
      clear(media, h('div', { class: 'img-missing' }, '—'));
      clear(evidenceSlot, h('p', { class: 'text-error small' }, `제출물 정보를 불러오지 못했습니다: ${describeError(error)}`));
    },
  };
}

function evidenceLine(submissionId, ev) {
  if (ev.missing) return h('li', { class: 'muted small mono' }, ev.id);
  return h(
    'li',
    { class: 'entry-evidence-item' },
    image(ev.local_media_url || ev.image_url, '', { class: 'mini' }),
    h(
      'div',
      {},
      h('div', {}, sourceBadge(ev.source), ' ', hashLink(['review', submissionId], ev.title || ev.url || ev.id, {}, { evidence: ev.id })),
      h(
        'div',
        { class: 'small muted' },
        typeof ev.similarity === 'number' ? `유사도 ${percent(ev.similarity)} · ` : '',
        ev.url ? externalLink(ev.url, ev.url, { class: 'break' }) : null,
        ' ',
        statusBadge(ev.status),
      ),
    ),
  );
}

async function eachLimited(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
