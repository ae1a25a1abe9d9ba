import { body } from '../review/seed.js';
import type { TestEnv } from './env.js';

export type ReportItem = { id: string | null; file: string | null; reason: string | null };

/** Every item of one list of a kept reload report (GET /api/reloads/{id}), following next_cursor page by page. */
export async function wholeList(env: TestEnv, reportId: string, list: string, limit: number) {
  const items: ReportItem[] = [];
  const pages: number[] = [];
  for (let cursor: string | null = null; ; ) {
    const page: { items: ReportItem[]; next_cursor: string | null } = await body(
      env.call('GET', `/api/reloads/${reportId}?list=${list}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`),
    );
    items.push(...page.items);
    pages.push(page.items.length);
    cursor = page.next_cursor;
    if (!cursor) return { items, pages, last: page };
  }
}
