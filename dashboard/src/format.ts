/**
 * Formatting for people: the browser's locale, amounts in their currency, times in local time.
 * Amounts always carry their currency's decimals (€180.23, ¥1,802, not €180.2292 or €49.9): the
 * API keeps four decimal places, a person reads the currency's. Spaces inside a formatted amount
 * or percentage are non-breaking, so "49,99 €" never wraps between the number and its sign.
 */

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** The browser's currency format for `currency` (its own number of decimals); a code Intl does not know gets two. */
function moneyFormat(currency: string): Intl.NumberFormat {
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    } catch {
      f = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    moneyFormats.set(currency, f);
  }
  return f;
}

const NBSP = '\u00a0';
const keepTogether = (s: string) => s.replace(/ /g, NBSP);

export function money(amount: number | string | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined || amount === '') return '—';
  const n = Number(amount);
  if (!Number.isFinite(n)) return String(amount);
  if (!currency)
    return keepTogether(
      new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(n),
    );
  const f = moneyFormat(currency);
  const text = f.format(n);
  // A currency Intl did not know is formatted as a number: say which.
  return keepTogether(f.resolvedOptions().style === 'currency' ? text : `${text} ${currency}`);
}

/** The amount's number only, with its currency's decimals (for a chart's axis or a table sorted by value). */
export function moneyDigits(currency: string | null | undefined): number {
  if (!currency) return 2;
  return moneyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2;
}

const num = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });
export const number = (n: number | null | undefined) => (n === null || n === undefined ? '—' : num.format(n));

const int = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
export const count = (n: number) => int.format(n);

export function percent(p: number | null | undefined, signed = true): string {
  if (p === null || p === undefined) return '—';
  const s = `${Math.abs(p).toLocaleString(undefined, { maximumFractionDigits: 2 })}${NBSP}%`;
  if (!signed || p === 0) return p === 0 ? `0${NBSP}%` : s;
  return `${p > 0 ? '+' : '−'}${s}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A time of day in the browser's locale ("14:05", "2:05 PM"). */
export const clock = (d: Date) => new Intl.DateTimeFormat(undefined, { timeStyle: 'short' }).format(d);

export function when(iso: string | null | undefined, seconds = false): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : (seconds ? dateTimeSeconds : dateTime).format(d);
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];

/** "3 hours ago", "in 5 minutes". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const diff = (new Date(iso).getTime() - now) / 1000;
  for (const [unit, secs] of UNITS) {
    if (Math.abs(diff) >= secs || unit === 'second') return rtf.format(Math.round(diff / secs), unit);
  }
  return '—';
}

/** "12:04" countdown from seconds. */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  const r = s % 60;
  return m >= 60 ? `${Math.floor(m / 60)}${NBSP}h ${m % 60}${NBSP}min` : `${m}:${String(r).padStart(2, '0')}`;
}

export const stock = (inStock: boolean | null | undefined) =>
  inStock === true ? 'in stock' : inStock === false ? 'out of stock' : 'stock unknown';

/** An input[type=datetime-local] value for an instant, in local time. */
export function toLocalInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
