// The answer of the unsubscribe link (GET unsubscribe-email.ts, POST unsubscribe-email-one-click.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBodySchema } from '../../http/schemas.js';
import { escapeHtml } from '../render.js';
import { UNSUBSCRIBED_MESSAGE, UnsubscribeQuerySchema, UnsubscribeResultSchema } from '../schemas.js';

/** A browser (the link clicked in a mail) gets a page; anything that asks for JSON, JSON. */
const wantsHtml = (request: FastifyRequest) => {
  const accept = request.headers.accept ?? '';
  return /text\/html/i.test(accept) && !/application\/json/i.test(accept.split(',')[0] ?? '');
};

const htmlPage = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head>` +
  `<body style="font-family:sans-serif;max-width:40em;margin:3em auto;padding:0 1em"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;

export async function answer(request: FastifyRequest, reply: FastifyReply, run: () => Promise<void>) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  // A link that does not work answers in our one error shape (JSON), whoever asks: the page is
  // for the one outcome a person needs to see, the unsubscription.
  await run();
  if (wantsHtml(request)) {
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(htmlPage('Unsubscribed', UNSUBSCRIBED_MESSAGE));
  }
  return { unsubscribed: true as const, message: UNSUBSCRIBED_MESSAGE as typeof UNSUBSCRIBED_MESSAGE };
}

/** What both methods of the link take and answer (one token, the same three outcomes). */
export const unsubscribeSchema = {
  tags: ['Email'],
  security: [],
  description:
    'The signed token `s` of the link in every mail (signed; it names one subscription and works once) disables that ' +
    'subscription and drops its unsent mail. An altered token is a 400, a used one (or one whose subscription was ' +
    'deleted) a 410, both in the JSON error shape; neither answer says anything about any subscription. Browsers (Accept: text/html) get a page for the unsubscription.',
  querystring: UnsubscribeQuerySchema,
  response: {
    200: {
      ...UnsubscribeResultSchema,
      description: 'Unsubscribed (JSON; a page for a browser that asks for text/html)',
    },
    400: { ...ErrorBodySchema, description: 'The token is not one this server issued (altered or cut short)' },
    410: { ...ErrorBodySchema, description: 'The token was used already, or its subscription no longer exists' },
  },
};
