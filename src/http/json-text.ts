/**
 * What JSON.parse cannot tell us about a request body, found in one pass over its text before
 * it is parsed: nesting deeper than MAX_JSON_DEPTH (4 million `[` took the event loop ~3 s in
 * JSON.parse and the validators after it), `\ud800`-style escapes that leave a lone surrogate
 * (text that is not Unicode and would be stored as U+FFFD), and numbers JSON.parse would round
 * (`19.99000000000000000000000001` becomes 19.99, silently passing the 4-decimal money rule).
 * Node 20's JSON.parse has no source-text access for revivers, so numbers are judged here on
 * their text. The scan does not validate JSON: JSON.parse still does, after it.
 */

/** Arrays and objects nested deeper than this are refused (no resource of ours nests beyond 6). */
export const MAX_JSON_DEPTH = 64;

/** Significant digits a double always holds exactly (DBL_DIG). */
const EXACT_DIGITS = 15;

export type JsonTextProblem =
  | { kind: 'too_deep' }
  | { kind: 'lone_surrogate'; path: string }
  | { kind: 'inexact_number'; path: string; text: string };

interface Level {
  array: boolean;
  index: number;
  /** Offsets of the current key's quoted text in an object. */
  keyStart: number;
  keyEnd: number;
  expectingKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER_TOKEN = /-?[0-9][0-9.eE+-]*/y;

export function inspectJsonText(text: string): JsonTextProblem | null {
  const stack: Level[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      // { [
      if (stack.length >= MAX_JSON_DEPTH) return { kind: 'too_deep' };
      stack.push({ array: c === 0x5b, index: 0, keyStart: -1, keyEnd: -1, expectingKey: c === 0x7b });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else if (c === 0x2c) {
      // ,
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectingKey = true;
      i++;
    } else if (c === 0x3a) {
      // :
      const top = stack[stack.length - 1];
      if (top) top.expectingKey = false;
      i++;
    } else if (c === QUOTE) {
      const start = i;
      i = i + 1;
      let lone = false;
      for (;;) {
        let ch = text.charCodeAt(i);
        while (ch !== QUOTE && ch !== BACKSLASH && i < n) ch = text.charCodeAt(++i);
        if (i >= n) return null; // unterminated: JSON.parse will say so
        if (ch === QUOTE) break;
        // An escape: only \uXXXX needs a look.
        if (text.charCodeAt(i + 1) === 0x75 && !lone) {
          const unit = parseInt(text.slice(i + 2, i + 6), 16);
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const next =
              text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === 0x75
                ? parseInt(text.slice(i + 8, i + 12), 16)
                : NaN;
            if (next >= 0xdc00 && next <= 0xdfff) i += 6;
            else lone = true;
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            lone = true;
          }
        }
        i += 2;
      }
      i++;
      const top = stack[stack.length - 1];
      const isKey = top !== undefined && !top.array && top.expectingKey;
      if (isKey) {
        top.keyStart = start;
        top.keyEnd = i;
      }
      if (lone) return { kind: 'lone_surrogate', path: pathOf(text, stack) };
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER_TOKEN.lastIndex = i;
      const token = NUMBER_TOKEN.exec(text)?.[0] ?? text[i]!;
      i += token.length;
      if (!isExact(token)) return { kind: 'inexact_number', path: pathOf(text, stack), text: token };
    } else {
      i++;
    }
  }
  return null;
}

/** Whether JSON.parse keeps the number's value: the text and the parsed double name one decimal. */
export function isExact(token: string): boolean {
  // Up to 15 significant digits without an exponent always survive a double.
  if (token.length <= EXACT_DIGITS && !/[eE]/.test(token)) return true;
  const value = Number(token);
  if (!Number.isFinite(value)) return Number.isNaN(value); // NaN: not a number at all, JSON.parse refuses it
  const a = canonical(token);
  return a === null || a === canonical(String(value));
}

/** Decimal text as "<digits>e<exponent>" without leading or trailing zeros; the sign of zero dropped. */
function canonical(text: string): string | null {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return null;
  const int = m[2] ?? '';
  const frac = m[3] ?? '';
  let digits = int + frac;
  let exp = Number(m[4] ?? 0) - frac.length;
  const lead = /^0*/.exec(digits)![0].length;
  digits = digits.slice(lead);
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  return `${m[1]}${trimmed}e${exp}`;
}

/** The field path of the value being scanned, as validation details write it: `products[2].base_price`. */
function pathOf(text: string, stack: Level[]): string {
  let out = '';
  for (const level of stack) {
    if (level.array) out += `[${level.index}]`;
    else if (level.keyStart >= 0) {
      const key = keyText(text.slice(level.keyStart, level.keyEnd));
      out = out ? `${out}.${key}` : key;
    }
  }
  return out || '(body)';
}

function keyText(quoted: string): string {
  try {
    return String(JSON.parse(quoted));
  } catch {
    return quoted.slice(1, -1);
  }
}
