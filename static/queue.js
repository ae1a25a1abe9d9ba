// Review queue: undecided first, then by risk (the server's order), with filters and paging kept in
// the hash so a filtered page is linkable and survives a reload of the browser tab.
import { api } from './api.js';
import { h, append, hashLink, image, routeHref, actionButton, clear, downloadLink } from './dom.js';
import { progressPanel } from './progress.js';
import {
  state,
  riskBadge,
  decisionBadge,
  enrichmentBadge,
  attentionBadge,
  attempt,
  loading,
  errorPanel,
  emptyState,
  refreshSummary,
  toast,
  RISK_LEVEL_LABEL,
  ANALYSIS_LABEL,
  ENRICHMENT_LABEL,
  labelled,
  tableHead,
} from './ui.js';

/** The queue's `decision` filter value that selects submissions without a decision. */
export const UNDECIDED = 'undecided';
const PAGE_SIZES = [25, 50, 100];

const ENRICHMENT_FILTERS = ['pending', 'running', 'done', 'failed', 'skipped'];

// A page after the first is reached with the server's cursor (`after`), which costs the same at
// any depth; `offset` is kept beside it only to number the rows and to step back.
function readFilters(query) {
  const limit = Number(query.get('limit'));
  const offset = Number(query.get('offset'));
  return {
    q: query.get('q') ?? '',
    decision: query.get('decision') ?? '',
    level: query.get('level') ?? '',
    enrichment: query.get('enrichment') ?? '',
    attention: query.get('attention') ?? '',
    people: query.get('people') ?? '',
    limit: PAGE_SIZES.includes(limit) ? limit : 50,
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
    after: query.get('after') ?? '',
  };
}

/** The filters that choose rows, as the queue API and the export take them (the page's place apart). */
const chosenRows = ({ q, decision, level, enrichment, attention, people }) => ({ q, decision, level, enrichment, attention, people });

function go(filters) {
  location.hash = routeHref(['queue'], {
    q: filters.q || undefined,
    decision: filters.decision,
    level: filters.level,
    enrichment: filters.enrichment || undefined,
    attention: filters.attention || undefined,
    people: filters.people || undefined,
    limit: filters.limit === 50 ? undefined : filters.limit,
    offset: filters.offset || undefined,
    after: filters.after || undefined,
  });
}

export async function renderQueue(view) {
  const filters = readFilters(view.query);
  const reportSlot = h('div', { class: 'reload-report-slot' });
  // Rows finish analysis and enrichment while the operator watches: the list follows the progress.
  const progress = progressPanel(() => loadList());
  const listSlot = h('div', { class: 'queue-list' }, loading());

  const decisionSelect = h(
    'select',
    { id: 'filter-decision', name: 'decision' },
    h('option', { value: '' }, '전체 (all)'),
    h('option', { value: UNDECIDED }, '미결정 (undecided)'),
    state.decisions.map((d) => h('option', { value: d }, d)),
  );
  decisionSelect.value = filters.decision;
  const levelSelect = h(
    'select',
    { id: 'filter-level', name: 'level' },
    h('option', { value: '' }, '전체 (all)'),
    ['high', 'medium', 'low'].map((l) => h('option', { value: l }, `${RISK_LEVEL_LABEL[l]} (${l})`)),
  );
  levelSelect.value = filters.level;
  const enrichmentSelect = h(
    'select',
    { id: 'filter-enrichment', name: 'enrichment' },
    h('option', { value: '' }, '전체 (all)'),
    ENRICHMENT_FILTERS.map((status) => h('option', { value: status }, `${ENRICHMENT_LABEL[status] ?? status} (${status})`)),
  );
  enrichmentSelect.value = filters.enrichment;
  const attentionSelect = yesNoFilter('attention', '주의 후보 일치만', '일치 없음만', filters.attention);
  // Anyone in the picture: a person box or a face (issue 27).
  const peopleSelect = yesNoFilter('people', '인물 있음 (has people)', '인물 없음 (no people)', filters.people);
  const sizeSelect = h(
    'select',
    { id: 'filter-limit', name: 'limit' },
    PAGE_SIZES.map((n) => h('option', { value: String(n) }, `${n}건`)),
  );
  sizeSelect.value = String(filters.limit);
  const searchInput = h('input', { id: 'filter-q', name: 'q', type: 'search', maxlength: '200', placeholder: 'ID 또는 제목', value: filters.q });
  const onFilter = () =>
    go({
      q: searchInput.value.trim(),
      decision: decisionSelect.value,
      level: levelSelect.value,
      enrichment: enrichmentSelect.value,
      attention: attentionSelect.value,
      people: peopleSelect.value,
      limit: Number(sizeSelect.value),
      offset: 0,
      after: '',
    });
  for (const select of [decisionSelect, levelSelect, enrichmentSelect, attentionSelect, peopleSelect, sizeSelect]) select.addEventListener('change', onFilter);

  const reloadButton = actionButton(
    '제출물 다시 읽기 (reload)',
    async () => {
      reloadButton.textContent = '읽는 중…';
      const reading = showReloadProgress((text) => {
        reloadButton.textContent = text;
      });
      const report = await reloadAll((remaining) => {
        reloadButton.textContent = `읽는 중… (남은 파일 ${remaining})`;
      }).finally(reading.stop);
      reloadButton.textContent = '제출물 다시 읽기 (reload)';
      if (!report) return;
      clear(
        reportSlot,
        reloadReport(report, () => clear(reportSlot)),
      );
      toast(
        `가져옴 ${report.counts.imported}건 · 갱신 ${report.counts.updated}건 · 거부 ${report.counts.rejected ?? report.rejected?.length ?? 0}건`,
        'success',
      );
      refreshSummary();
      progress.poll();
      await loadList();
    },
    { class: 'primary', id: 'reload-submissions' },
  );

  append(
    view.root,
    h(
      'div',
      { class: 'screen-head' },
      h('h1', {}, '검토 대기열 ', h('span', { class: 'en' }, 'Review queue')),
      h(
        'div',
        { class: 'toolbar' },
        actionButton('새로 고침', () => loadList(), { id: 'refresh-queue' }),
        // The export takes the filters shown; the whole filtered queue, not just this page.
        downloadLink('queue', chosenRows(filters), 'CSV 내보내기', { id: 'export-queue' }),
        downloadLink('decisions', {}, '결정 내보내기', { id: 'export-decisions' }),
        reloadButton,
      ),
    ),
    h(
      'form',
      {
        class: 'filters',
        role: 'search',
        on: {
          submit: (e) => {
            e.preventDefault();
            onFilter();
          },
        },
      },
      ...labelled('검색 ', searchInput),
      h('button', { type: 'submit' }, '찾기'),
      ...labelled('결정 ', decisionSelect),
      ...labelled('위험도 ', levelSelect),
      ...labelled('보강 ', enrichmentSelect),
      ...labelled('주의 ', attentionSelect),
      ...labelled('인물 ', peopleSelect),
      ...labelled('쪽당 ', sizeSelect),
    ),
    progress.panel,
    reportSlot,
    listSlot,
  );
  progress.poll();

  async function loadList() {
    try {
      const data = await api.reviewQueue({
        limit: filters.limit,
        ...chosenRows(filters),
        ...(filters.after ? { cursor: filters.after } : { offset: filters.offset }),
      });
      clear(listSlot, queueTable(data.items ?? []), pager(filters, data));
    } catch (error) {
      clear(listSlot, errorPanel(error, loadList));
    }
  }
  await loadList();
}

function queueTable(items) {
  if (!items.length) return emptyState('조건에 맞는 제출물이 없습니다.');
  return h(
    'table',
    { class: 'table queue-table' },
    tableHead('이미지', '제목 / ID', '제출 시각', '위험도', '결정', '보강', '주의'),
    h('tbody', {}, items.map(queueRow)),
  );
}

function queueRow(s) {
  return h(
    'tr',
    { class: ['queue-row', s.decision ? 'is-decided' : 'is-open', s.attention_match && 'has-attention'], dataset: { submissionId: s.id } },
    h(
      'td',
      { class: 'thumb-cell' },
      hashLink(['review', s.id], image(s.thumb_url ?? s.media_url, '', { class: 'thumb' }), { tabindex: '-1', 'aria-hidden': 'true' }),
    ),
    h('td', { class: 'title-cell' }, hashLink(['review', s.id], s.title || '(제목 없음)', { class: 'queue-title' }), h('div', { class: 'muted mono' }, s.id)),
    h('td', { class: 'nowrap' }, s.submitted_at ?? '—'),
    h('td', {}, riskBadge(s.risk)),
    h('td', {}, decisionBadge(s.decision)),
    h(
      'td',
      {},
      enrichmentBadge(s.enrichment_status),
      s.analysis_status && s.analysis_status !== 'done' ? h('div', { class: 'muted small' }, ANALYSIS_LABEL[s.analysis_status] ?? s.analysis_status) : null,
    ),
    h('td', {}, s.attention_match ? attentionBadge() : h('span', { class: 'muted' }, '—')),
  );
}

function pager(filters, data) {
  const total = data.total ?? 0;
  const shown = (data.items ?? []).length;
  const from = total === 0 || shown === 0 ? 0 : filters.offset + 1;
  const to = filters.offset + shown;
  const prev = h('button', { type: 'button', disabled: filters.offset === 0 }, '← 이전');
  const next = h('button', { type: 'button', disabled: !data.next_cursor }, '다음 →');
  prev.addEventListener('click', () => go({ ...filters, offset: Math.max(0, filters.offset - filters.limit), after: '' }));
  next.addEventListener('click', () => go({ ...filters, offset: filters.offset + filters.limit, after: data.next_cursor }));
  return h('nav', { class: 'pager', 'aria-label': '쪽 이동' }, prev, h('span', { class: 'pager-info' }, `${from}–${to} / 전체 ${total}건`), next);
}

const RELOAD_PROGRESS_MS = 1000;

/**
 * While a reload runs, how far it has come (GET /api/submissions/reload/progress, written by the
 * reload from whichever process runs it): files listed, then files read of those to read.
 */
function showReloadProgress(show) {
  let stopped = false;
  const number = (n) => n.toLocaleString('ko-KR');
  const poll = async () => {
    const { reload } = await api.reloadProgress().catch(() => ({ reload: null }));
    if (stopped) return;
    if (reload?.phase === 'listing') show(`읽는 중… (목록 ${number(reload.listed)}개 비교)`);
    else if (reload?.phase === 'reading') show(`읽는 중… (파일 ${number(reload.read)} / ${number(reload.to_read)})`);
    timer = setTimeout(poll, RELOAD_PROGRESS_MS);
  };
  let timer = setTimeout(poll, RELOAD_PROGRESS_MS);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Reloads until no file is left: on Workers one reload reads only as many new files as one
 * invocation may (`remaining` says how many wait). The calls' reports become one: counts add up,
 * each later call counts the files an earlier one imported as unchanged, every refusal is reported
 * again, and the kept reports (`report_id`) page the lists beyond the first 100 of each call.
 */
async function reloadAll(onRemaining) {
  const imported = [];
  const updated = [];
  const reports = [];
  const counts = { imported: 0, updated: 0 };
  let queued = 0;
  let remaining = Infinity;
  for (;;) {
    const report = await attempt('제출물 다시 읽기', () => api.reload());
    if (!report) return null;
    imported.push(...(report.imported ?? []));
    updated.push(...(report.updated ?? []));
    counts.imported += report.counts?.imported ?? report.imported?.length ?? 0;
    counts.updated += report.counts?.updated ?? report.updated?.length ?? 0;
    if (report.report_id) reports.push(report.report_id);
    queued += report.queued_jobs ?? 0;
    // A call that read nothing more would be repeated forever.
    if (!(report.remaining > 0) || report.remaining >= remaining) {
      const earlier = counts.imported + counts.updated - (report.counts?.imported ?? 0) - (report.counts?.updated ?? 0);
      return {
        ...report,
        imported,
        updated,
        counts: { ...report.counts, ...counts },
        reports,
        queued_jobs: queued,
        unchanged: Math.max(0, (report.unchanged ?? 0) - earlier),
      };
    }
    remaining = report.remaining;
    onRemaining(remaining);
  }
}

const REPORT_PAGE = 500;

/**
 * One list of a reload: the ids its answers named (the first 100 of each call), and on request
 * the whole list, read page by page from the kept reports (GET /api/reloads/{id}).
 */
function reloadIdList(ids, total, list, reportIds) {
  if (total === 0) return h('span', { class: 'muted' }, '없음');
  const ul = h('ul', { class: 'id-list' });
  const show = (items) => append(ul, ...items.map((id) => h('li', {}, hashLink(['review', id], id))));
  show(ids);
  let shown = ids.length;
  let paging = false;
  let at = 0;
  let cursor = null;
  const more = h('button', { type: 'button', class: 'quiet reload-more' });
  const update = () => {
    more.textContent = `더 보기 (${total - shown}건 남음)`;
    more.hidden = shown >= total || at >= reportIds.length;
  };
  more.addEventListener('click', async () => {
    // The first page of the reports repeats what the answers named: the list starts again from them.
    if (!paging) {
      clear(ul);
      shown = 0;
      paging = true;
    }
    const page = await attempt('다시 읽기 목록', () => api.reloadReport(reportIds[at], { list, cursor, limit: REPORT_PAGE }));
    if (!page) return;
    show(page.items.map((item) => item.id));
    shown += page.items.length;
    cursor = page.next_cursor;
    if (!cursor) at++;
    update();
  });
  update();
  return h('div', {}, ul, more);
}

function reloadReport(report, dismiss) {
  const imported = report.imported ?? [];
  const updated = report.updated ?? [];
  const rejected = report.rejected ?? [];
  const counts = { imported: imported.length, updated: updated.length, rejected: rejected.length, ...report.counts };
  const reports = report.reports ?? [];
  return h(
    'section',
    { class: 'panel reload-report', 'aria-label': '다시 읽기 결과' },
    h(
      'div',
      { class: 'panel-head' },
      h('h2', {}, '다시 읽기 결과 ', h('span', { class: 'en' }, 'Reload report')),
      h('button', { type: 'button', class: 'quiet', on: { click: dismiss } }, '닫기'),
    ),
    h(
      'dl',
      { class: 'report-grid' },
      h('dt', {}, `가져옴 (imported) ${counts.imported}`),
      h('dd', {}, reloadIdList(imported, counts.imported, 'imported', reports)),
      h('dt', {}, `갱신 (updated) ${counts.updated}`),
      h('dd', {}, reloadIdList(updated, counts.updated, 'updated', reports)),
      h('dt', {}, '변경 없음 (unchanged)'),
      h('dd', {}, String(typeof report.unchanged === 'number' ? report.unchanged : (report.unchanged?.length ?? 0))),
      h('dt', {}, '대기열 작업 (queued jobs)'),
      h('dd', {}, String(typeof report.queued_jobs === 'number' ? report.queued_jobs : (report.queued_jobs?.length ?? 0))),
      report.remaining > 0 ? [h('dt', {}, '남은 파일 (remaining)'), h('dd', {}, `${report.remaining}건: 다시 읽기를 한 번 더 누르세요`)] : null,
    ),
    h('h3', {}, `거부 (rejected) ${counts.rejected}`),
    rejected.length ? rejectedTable(rejected, counts.rejected, reports.at(-1)) : h('p', { class: 'muted' }, '거부된 항목이 없습니다.'),
  );
}

/**
 * The refusals of a reload: the first 100 its answer named, then on request the rest from the
 * last call's kept report (every call reports every refusal again, so the last has them all).
 */
function rejectedTable(rejected, total, reportId) {
  const row = (r) => h('tr', {}, h('td', { class: 'mono' }, r.file ?? '—'), h('td', { class: 'mono' }, r.id ?? '—'), h('td', {}, r.reason ?? '—'));
  const body = h('tbody', {}, rejected.map(row));
  let shown = rejected.length;
  // The kept report's cursors are its own: the list is read again from its start, which repeats
  // what the answer named (as reloadIdList does).
  let paging = false;
  let cursor = null;
  const more = h('button', { type: 'button', class: 'quiet reload-more' });
  const update = () => {
    more.textContent = `더 보기 (${total - shown}건 남음)`;
    more.hidden = shown >= total || !reportId || (paging && !cursor);
  };
  more.addEventListener('click', async () => {
    const limit = paging ? REPORT_PAGE : shown + REPORT_PAGE;
    const page = await attempt('거부 목록', () => api.reloadReport(reportId, { list: 'rejected', cursor: cursor ?? undefined, limit }));
    if (!page) return;
    if (!paging) {
      clear(body);
      shown = 0;
      paging = true;
    }
    append(body, ...page.items.map(row));
    shown += page.items.length;
    cursor = page.next_cursor;
    update();
  });
  update();
  return h('div', {}, h('table', { class: 'table rejected-table' }, tableHead('파일', 'ID', '사유'), body), more);
}

/** A filter of the queue that is all, true or false: a select named `name` with id `filter-<name>`. */
function yesNoFilter(name, yes, no, value) {
  const select = h(
    'select',
    { id: `filter-${name}`, name },
    h('option', { value: '' }, '전체 (all)'),
    h('option', { value: 'true' }, yes),
    h('option', { value: 'false' }, no),
  );
  select.value = value;
  return select;
}
