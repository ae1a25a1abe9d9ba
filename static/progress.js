// The work in flight (GET /api/jobs/progress): one bar per job type while analysis or enrichment
// runs, its rate and time left, and every failure of the run with its reason. It polls only while
// work is active and its panel is on screen; `onProgress` lets the queue show finished rows.
import { api } from './api.js';
import { clear, h } from './dom.js';

const TYPE_LABEL = { analyse: '분석 (analysis)', enrich: '근거 수집 (enrichment)', index: '유사도 색인 (similarity index)', backup: '백업 (backup)' };
const POLL_MS = 1000;

function duration(seconds) {
  if (seconds === null || seconds === undefined) return '계산 중';
  if (seconds < 60) return `약 ${seconds}초`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `약 ${minutes}분` : `약 ${Math.floor(minutes / 60)}시간 ${minutes % 60}분`;
}

function typeRow(t) {
  const finished = t.done + t.failed + t.skipped;
  const total = finished + t.queued + t.running;
  return h(
    'div',
    { class: 'progress-row', 'data-job-type': t.type },
    h('label', { for: `progress-${t.type}` }, TYPE_LABEL[t.type] ?? t.type),
    h('progress', { id: `progress-${t.type}`, max: String(Math.max(total, 1)), value: String(finished) }),
    h(
      'span',
      { class: 'progress-figures' },
      `${finished} / ${total}`,
      t.running ? ` · 진행 중 ${t.running}` : '',
      t.failed ? ` · 실패 ${t.failed}` : '',
      t.rate_per_s > 0 ? ` · ${t.rate_per_s}건/초` : '',
      t.queued + t.running > 0 ? ` · 남은 시간 ${duration(t.eta_s)}` : ' · 완료',
    ),
  );
}

function failureList(failures) {
  if (!failures.length) return null;
  return h(
    'details',
    { class: 'progress-failures', open: '' },
    h('summary', {}, `실패 ${failures.length}건 (failures)`),
    h(
      'ul',
      {},
      failures.map((f) =>
        h(
          'li',
          {},
          h('strong', {}, f.submission_id ?? `job ${f.job_id}`),
          ` · ${TYPE_LABEL[f.type] ?? f.type}: `,
          h('span', { class: 'failure-reason' }, f.error ?? '이유 없음'),
        ),
      ),
    ),
  );
}

/**
 * A panel that stays empty while nothing runs. `poll()` starts watching (the queue calls it after
 * a reload); `onProgress(progress)` is called whenever the finished counts move, and once at the end.
 */
export function progressPanel(onProgress) {
  const panel = h('section', { class: 'panel job-progress', 'aria-label': '작업 진행 상황', 'aria-live': 'polite', hidden: '' });
  let timer = null;
  let lastFinished = -1;

  function render(progress) {
    const shown = progress.types.filter((t) => t.queued + t.running + t.done + t.failed + t.skipped > 0);
    panel.hidden = shown.length === 0 && progress.failures.length === 0;
    clear(panel, h('h2', {}, '작업 진행 ', h('span', { class: 'en' }, 'Progress')), shown.map(typeRow), failureList(progress.failures));
  }

  async function tick() {
    timer = null;
    if (!panel.isConnected && lastFinished !== -1) return;
    let progress;
    try {
      progress = await api.jobsProgress();
    } catch {
      timer = setTimeout(tick, POLL_MS * 3);
      return;
    }
    render(progress);
    const finished = progress.types.reduce((n, t) => n + t.done + t.failed + t.skipped, 0);
    if (finished !== lastFinished) {
      if (lastFinished !== -1) onProgress?.(progress);
      lastFinished = finished;
    }
    if (progress.active) timer = setTimeout(tick, POLL_MS);
  }

  return {
    panel,
    poll() {
      if (timer === null) tick();
    },
  };
}
