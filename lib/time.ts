import type { Clock } from './ports.js';

/** Time in SVC_TIMEZONE: registry times are wall-clock there, and quota days start at its midnight. */

// Making a formatter costs far more than using one (a reload of 100,000 files formats each time).
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, fmt);
  }
  return fmt;
}

function parts(date: Date, timeZone: string): Record<string, number> {
  const fmt = formatter(timeZone);
  const out: Record<string, number> = {};
  for (const p of fmt.formatToParts(date)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** `YYYY-MM-DD` of the instant in the zone. */
export function dayIn(date: Date, timeZone: string): string {
  const p = parts(date, timeZone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** `YYYY-MM-DD HH:MM` of the instant in the zone (the registry's form). */
export function formatLocal(date: Date, timeZone: string): string {
  const p = parts(date, timeZone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${two(p.month)}-${two(p.day)} ${two(p.hour)}:${two(p.minute)}`;
}

/**
 * The real instant (epoch seconds) of a `YYYY-MM-DD HH:MM` wall-clock time in the zone, or null when
 * the text is not such a time. The zone's offset is found by probing, so daylight-saving zones work.
 */
export function parseLocal(text: string, timeZone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number);
  const asUtc = Date.UTC(y, mo - 1, d, h, mi);
  const check = new Date(asUtc);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59) return null;
  let guess = asUtc;
  for (let i = 0; i < 3; i++) {
    const p = parts(new Date(guess), timeZone);
    const shown = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
    guess += asUtc - shown;
  }
  return Math.floor(guess / 1000);
}

export const systemClock: Clock = { now: () => new Date() };
