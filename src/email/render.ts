/**
 * What mails say (docs/EMAIL.md, "What is mailed"): a plain-text part and an HTML part built
 * from the same lines. Every string that comes from users (product and competitor names, alert
 * messages, addresses) goes into the HTML escaped, and into headers only through nodemailer,
 * which encodes them; none reaches a header raw.
 */

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

/** One thing that happened, as a mail lists it. */
export interface MailEvent {
  id: string;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
  product_name: string | null;
  competitor_name: string | null;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** Control characters (CR and LF among them) become spaces: one line stays one line, in a subject too. */

const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;

function money(v: unknown, currency: unknown): string {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  const c = str(currency) ?? '';
  if (!Number.isFinite(n)) return '?';
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: c }).format(n);
  } catch {
    return `${n} ${c}`.trim();
  }
}

const who = (e: MailEvent) =>
  e.data.competitor_id ? (e.competitor_name ?? str(e.data.competitor_id) ?? 'a competitor') : 'your own price';

const what = (e: MailEvent) => e.product_name ?? str(e.data.product_id) ?? 'a product';

/** One line for a person about an event. */
export function describeEvent(e: MailEvent): string {
  const d = e.data;
  switch (e.type) {
    case 'alert.triggered':
      return oneLine(str(d.message) ?? `Alert ${str(d.alert_id) ?? ''} fired`);
    case 'price.changed': {
      const o = d.old as Record<string, unknown> | null | undefined;
      const n = d.new as Record<string, unknown> | null | undefined;
      const from = o ? money(o.price, o.currency) : 'none';
      const to = n ? money(n.price, n.currency) : '?';
      return oneLine(`${what(e)}: ${who(e)} ${from} -> ${to}`);
    }
    case 'stock.changed': {
      const n = d.new as Record<string, unknown> | null | undefined;
      const state = n?.in_stock === true ? 'in stock' : n?.in_stock === false ? 'out of stock' : 'stock unknown';
      return oneLine(`${what(e)}: ${who(e)} now ${state}`);
    }
    case 'listing.check_failed':
      return oneLine(
        `A check of listing ${str(d.listing_id) ?? ''} failed: ${str(d.error) ?? str(d.error_code) ?? 'no price found'}`,
      );
    default: {
      const name = str(d.name) ?? str(d.id) ?? '';
      return oneLine(`${e.type} ${name}`);
    }
  }
}

function page(title: string, bodyHtml: string, unsubscribeUrl: string | undefined): string {
  const footer = unsubscribeUrl
    ? `<p style="color:#666;font-size:12px">You receive this because this address subscribed to pricehound notifications. ` +
      `<a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a></p>`
    : '';
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:sans-serif">${bodyHtml}${footer}</body></html>`
  );
}

const textFooter = (unsubscribeUrl: string | undefined) =>
  unsubscribeUrl
    ? `\n--\nYou receive this because this address subscribed to pricehound notifications.\nUnsubscribe: ${unsubscribeUrl}\n`
    : '';

export function renderConfirmation(code: string, unsubscribeUrl: string): Rendered {
  const subject = 'Confirm your pricehound notifications';
  const text =
    `Your confirmation code is ${code}\n\n` +
    `Enter it where you subscribed this address to pricehound notifications. Nothing else is sent to this address until then.\n` +
    `If you did not ask for this, ignore this mail or unsubscribe below.\n` +
    textFooter(unsubscribeUrl);
  const html = page(
    subject,
    `<p>Your confirmation code is</p><p style="font-size:24px;font-weight:bold;letter-spacing:4px">${escapeHtml(code)}</p>` +
      `<p>Enter it where you subscribed this address to pricehound notifications. Nothing else is sent to this address until then.</p>` +
      `<p>If you did not ask for this, ignore this mail or unsubscribe below.</p>`,
    unsubscribeUrl,
  );
  return { subject, text, html };
}

const TYPE_TITLES: Record<string, string> = {
  'alert.triggered': 'alert',
  'price.changed': 'price change',
  'stock.changed': 'stock change',
  'listing.check_failed': 'failed check',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The events of one minute, in the order they happened. */
export function renderEvents(events: readonly MailEvent[], unsubscribeUrl: string): Rendered {
  const alerts = events.filter((e) => e.type === 'alert.triggered').length;
  const subject =
    events.length === 1
      ? `pricehound: ${describeEvent(events[0]!)}`.slice(0, 180)
      : alerts === events.length
        ? `pricehound: ${plural(alerts, 'alert')}`
        : `pricehound: ${plural(events.length, 'event')}`;
  const lines = events.map((e) => ({
    when: e.created_at.toISOString().slice(0, 19).replace('T', ' ') + ' UTC',
    kind: TYPE_TITLES[e.type] ?? e.type,
    line: describeEvent(e),
  }));
  const text = lines.map((l) => `- ${l.when}  [${l.kind}]  ${l.line}`).join('\n') + '\n' + textFooter(unsubscribeUrl);
  const html = page(
    subject,
    `<ul>${lines.map((l) => `<li><small>${escapeHtml(l.when)}</small> <b>${escapeHtml(l.kind)}</b>: ${escapeHtml(l.line)}</li>`).join('')}</ul>`,
    unsubscribeUrl,
  );
  return { subject, text, html };
}

export interface DigestContent {
  label: 'daily' | 'weekly';
  /** The period, as the subscriber's clock reads it ("2026-03-02 08:00 to 2026-03-03 08:00 Europe/Berlin"). */
  period: string;
  alerts: MailEvent[];
  priceChanges: MailEvent[];
  failures: MailEvent[];
  /** More of a kind than listed (each list is capped). */
  more: { alerts: number; priceChanges: number; failures: number };
}

export function renderDigest(d: DigestContent, unsubscribeUrl: string): Rendered {
  const subject = `pricehound ${d.label} digest: ${plural(d.alerts.length + d.more.alerts, 'alert')}, ${plural(d.priceChanges.length + d.more.priceChanges, 'price change')}, ${plural(d.failures.length + d.more.failures, 'failing listing')}`;
  const sections: { title: string; items: MailEvent[]; more: number }[] = [
    { title: 'Alerts', items: d.alerts, more: d.more.alerts },
    { title: 'Price changes', items: d.priceChanges, more: d.more.priceChanges },
    { title: 'Failing listings', items: d.failures, more: d.more.failures },
  ];
  const when = (e: MailEvent) => e.created_at.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  let text = `Your ${d.label} pricehound digest, ${d.period}\n`;
  let html = `<p>Your ${escapeHtml(d.label)} pricehound digest, ${escapeHtml(d.period)}</p>`;
  for (const s of sections) {
    text += `\n${s.title} (${s.items.length + s.more})\n`;
    html += `<h3>${escapeHtml(s.title)} (${s.items.length + s.more})</h3>`;
    if (s.items.length === 0) {
      text += '  none\n';
      html += '<p>None.</p>';
      continue;
    }
    text += s.items.map((e) => `- ${when(e)}  ${describeEvent(e)}`).join('\n') + '\n';
    html += `<ul>${s.items.map((e) => `<li><small>${escapeHtml(when(e))}</small> ${escapeHtml(describeEvent(e))}</li>`).join('')}</ul>`;
    if (s.more > 0) {
      text += `  ... and ${s.more} more\n`;
      html += `<p>... and ${s.more} more</p>`;
    }
  }
  return { subject, text: text + textFooter(unsubscribeUrl), html: page(subject, html, unsubscribeUrl) };
}
