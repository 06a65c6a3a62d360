/** Reading JSON that pages embed: lenient for JSON-LD blocks, balanced-brace for inline scripts. */

export type JsonRead = { ok: true; value: unknown } | { ok: false; reason: string };

function tryParse(text: string): JsonRead {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/** Escapes raw control characters inside string literals (a common JSON-LD breakage). */
function escapeControlsInStrings(text: string): string {
  let out = '';
  let inString = false;
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
      else if (ch < 0x20) {
        out += text.slice(last, i) + (ch === 0x0a ? '\\n' : ch === 0x0d ? '\\r' : ch === 0x09 ? '\\t' : ' ');
        last = i + 1;
      }
    } else if (ch === 0x22) inString = true;
  }
  return out + text.slice(last);
}

/**
 * Parses a JSON-LD block as browsers' structured-data tools do in practice: HTML comment and
 * CDATA wrappers, raw newlines inside strings and trailing commas are tolerated; anything
 * else is reported, never guessed at.
 */
export function parseJsonLd(raw: string): JsonRead {
  const text = raw
    .trim()
    .replace(/^(?:<!--|\/\/\s*<!\[CDATA\[|<!\[CDATA\[)\s*/, '')
    .replace(/\s*(?:-->|\/\/\s*\]\]>|\]\]>)$/, '')
    .replace(/;\s*$/, '');
  if (text === '') return { ok: false, reason: 'the block is empty' };
  const first = tryParse(text);
  if (first.ok) return first;
  const repaired = escapeControlsInStrings(text).replace(/,(\s*[}\]])/g, '$1');
  const second = tryParse(repaired);
  return second.ok ? second : first;
}

/**
 * The JSON object literal starting at or after `from` in script text (`var meta = {...};`),
 * found by matching braces outside string literals, then parsed.
 */
export function jsonObjectAt(text: string, from: number): JsonRead {
  const start = text.indexOf('{', from);
  if (start === -1) return { ok: false, reason: 'no object literal' };
  let depth = 0;
  let quote = 0;
  for (let i = start; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (quote) {
      if (ch === 0x5c) i++;
      else if (ch === quote) quote = 0;
    } else if (ch === 0x22 || ch === 0x27) quote = ch;
    else if (ch === 0x7b) depth++;
    else if (ch === 0x7d && --depth === 0) return tryParse(text.slice(start, i + 1));
  }
  return { ok: false, reason: 'the object literal is not closed' };
}

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asArray(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}
