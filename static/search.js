// Manual search: a text query to one search provider; results as image cards, optionally stored
// as evidence of a submission.
import { api } from './api.js';
import { h, append, hashLink, externalLink, image, clear } from './dom.js';
import { state, attempt, emptyState, toast, labelled } from './ui.js';

const TYPES = [
  ['image', '이미지 (image)'],
  ['blog', '블로그 (blog)'],
  ['web', '웹 문서 (web)'],
];

export async function renderSearch(view) {
  const providers = (state.bootstrap?.providers ?? []).filter((p) => p.kind === 'search');
  const providerSelect = h(
    'select',
    { id: 'search-provider', name: 'provider', required: true },
    (providers.length ? providers : [{ id: 'regional' }, { id: 'global_search' }]).map((p) =>
      h('option', { value: p.id }, `${p.name ?? p.id}${p.enabled === false ? ' — 사용 불가' : ''}`),
    ),
  );
  const typeSelect = h(
    'select',
    { id: 'search-type', name: 'type' },
    TYPES.map(([value, label]) => h('option', { value }, label)),
  );
  const queryInput = h('input', {
    id: 'search-query',
    name: 'query',
    type: 'search',
    required: true,
    maxlength: '200',
    placeholder: '검색어 (텍스트만 보냅니다)',
    autocomplete: 'off',
  });
  const submissionInput = h('input', {
    id: 'search-submission',
    name: 'submission_id',
    type: 'text',
    list: 'search-submission-list',
    placeholder: '선택: 근거로 저장할 제출물 ID',
    autocomplete: 'off',
  });
  submissionInput.value = view.query.get('submission') ?? '';
  const submissionList = h(
    'datalist',
    { id: 'search-submission-list' },
    (state.bootstrap?.queue?.items ?? []).map((s) => h('option', { value: s.id }, s.title ?? '')),
  );
  const submit = h('button', { type: 'submit', class: 'primary' }, '검색');
  const results = h('div', { class: 'search-results', 'aria-live': 'polite' });

  const form = h(
    'form',
    { class: 'panel search-form' },
    h(
      'div',
      { class: 'form-grid' },
      ...labelled('제공자 (provider)', providerSelect),
      ...labelled('종류 (type)', typeSelect),
      ...labelled('검색어 (query)', queryInput),
      h('label', { for: 'search-submission' }, '제출물 (선택)'),
      h(
        'div',
        {},
        submissionInput,
        submissionList,
        h('p', { class: 'muted small' }, '제출물을 지정하면 결과가 그 제출물의 근거로 저장됩니다. 이미지는 보내지 않고 텍스트만 보냅니다.'),
      ),
    ),
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = queryInput.value.trim();
    if (!query) {
      queryInput.focus();
      return;
    }
    const body = { provider: providerSelect.value, query, type: typeSelect.value };
    const submissionId = submissionInput.value.trim();
    if (submissionId) body.submission_id = submissionId;
    submit.disabled = true;
    submit.textContent = '검색 중…';
    clear(results, h('p', { class: 'loading' }, '검색 중…'));
    const answer = await attempt('수동 검색', () => api.manualSearch(body));
    submit.disabled = false;
    submit.textContent = '검색';
    if (!answer) {
      clear(results);
      return;
    }
    paintResults(results, answer, submissionId);
    toast(`결과 ${(answer.results ?? []).length}건${submissionId ? ` · 근거 ${(answer.evidence ?? []).length}건 저장` : ''}`, 'success');
  });

  append(view.root, h('div', { class: 'screen-head' }, h('h1', {}, '수동 검색 ', h('span', { class: 'en' }, 'Manual search'))), form, results);
}

function paintResults(slot, answer, submissionId) {
  const items = answer.results ?? [];
  const evidence = answer.evidence ?? [];
  clear(
    slot,
    h('h2', {}, `결과 ${items.length}건 `, h('span', { class: 'muted small' }, `${answer.provider} · ${answer.type} · “`, answer.query, '”')),
    submissionId && evidence.length
      ? h('p', {}, `근거 ${evidence.length}건이 저장되었습니다: `, hashLink(['review', submissionId], `${submissionId} 검토 화면으로 →`))
      : null,
    items.length
      ? h(
          'div',
          { class: 'result-grid' },
          items.map((r) =>
            h(
              'article',
              { class: 'result-card' },
              image(r.thumbnail_url || r.image_url, r.title ? `결과 이미지: ${r.title}` : '결과 이미지', { class: 'result-img' }),
              h('h3', { class: 'result-title' }, r.title || '(제목 없음)'),
              r.url ? h('p', { class: 'small' }, externalLink(r.url, r.url, { class: 'break' })) : null,
              r.image_url && r.image_url !== r.url ? h('p', { class: 'small' }, '이미지: ', externalLink(r.image_url, r.image_url, { class: 'break' })) : null,
            ),
          ),
        )
      : emptyState('결과가 없습니다.'),
  );
}
