/** Formatting for people: the browser's locale, amounts in their currency, times in local time. */

const moneyFormats = new Map<string, Intl.NumberFormat>();

export function money(amount: number | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  if (!currency) return number(amount);
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 4 });
    } catch {
      f = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });
    }
    moneyFormats.set(currency, f);
  }
  return f.format(amount);
}

const num = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });
export const number = (n: number | null | undefined) => (n === null || n === undefined ? '—' : num.format(n));

const int = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
export const count = (n: number) => int.format(n);

export function percent(p: number | null | undefined, signed = true): string {
  if (p === null || p === undefined) return '—';
  const s = `${Math.abs(p).toLocaleString(undefined, { maximumFractionDigits: 2 })} %`;
  if (!signed || p === 0) return p === 0 ? '0 %' : s;
  return `${p > 0 ? '+' : '−'}${s}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

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
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m}:${String(r).padStart(2, '0')}`;
}

export const stock = (inStock: boolean | null | undefined) => (inStock === true ? 'in stock' : inStock === false ? 'out of stock' : 'stock unknown');

/** An input[type=datetime-local] value for an instant, in local time. */
export function toLocalInput(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
