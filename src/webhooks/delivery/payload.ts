import { iso } from '../../http/fields.js';

/** What an endpoint receives: the event envelope, or for `slack` endpoints one line of text. */

export interface EventToSend {
  id: string;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
}

export type WebhookBodyFormat = 'standard' | 'slack';

/** The envelope as /api/v1/events shows the event: id, type, created_at, data. */
export function envelope(e: EventToSend): string {
  return JSON.stringify({ id: e.id, type: e.type, created_at: iso(e.created_at), data: e.data });
}

const TEXT_MAX = 500;

/**
 * One line for a person in a chat: the event's own sentence where it has one (an alert event's
 * `message`), else its type and the name or id of what it is about.
 */
export function chatText(e: EventToSend): string {
  const d = e.data;
  const said = typeof d.message === 'string' && d.message.trim() !== '' ? d.message : undefined;
  const what =
    typeof d.name === 'string'
      ? d.name
      : typeof d.url === 'string'
        ? d.url
        : typeof d.id === 'string'
          ? d.id
          : undefined;
  const line =
    said !== undefined
      ? `pricehound ${e.type}: ${said}`
      : `pricehound ${e.type}${what !== undefined ? `: ${what}` : ''}`;
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length > TEXT_MAX ? `${flat.slice(0, TEXT_MAX - 1)}…` : flat;
}

/**
 * Text as Slack reads it, with its three control characters escaped as Slack documents
 * (api.slack.com/reference/surfaces/formatting#escaping): `&`, `<` and `>`. Everything in the
 * line may come from a user (product and competitor names, alert messages, URLs), and unescaped,
 * `<!channel>` would ping a whole channel and `<https://...|text>` would show a link as other text.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function webhookBody(format: WebhookBodyFormat, e: EventToSend): string {
  return format === 'slack' ? JSON.stringify({ text: slackEscape(chatText(e)) }) : envelope(e);
}
