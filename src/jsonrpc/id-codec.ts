import { randomBytes } from 'node:crypto';
import { idTokens, type IdTokens } from './id-tokens.js';

/**
 * JSON-RPC text ⇄ messages with ids kept exactly as written.
 *
 * `JSON.parse` turns every number into a double, so `9007199254740993` would
 * come back as `…992`: another request's id. An id whose literal is an integer
 * outside ±(2^53−1) is therefore parsed to a `bigint` holding exactly its
 * digits, and written back as those digits. A bigint never equals a string or
 * a number (`===`, Map keys), so `"9007199254740993"` stays another id; ids in
 * the safe range stay numbers, which print back as they came.
 *
 * Decimal and exponent forms: JSON-RPC 2.0 §4 says "Numbers SHOULD NOT contain
 * fractional parts" and the MCP SDKs accept integer ids only, so a client's
 * numeric id must be written as an integer. With `strict` (the faces), `1.5`,
 * `1.0`, `1e3` and `-0` are refused whatever their value (`IdLiteralError`,
 * answered -32600): the bridge could only answer them as `1.5`/`1`/`1000`/`0`,
 * not byte-identical. Without it (messages from an upstream) they keep their
 * double value.
 *
 * The same holds for the `params.requestId` of a `notifications/cancelled`:
 * the id it names must find its request.
 *
 * Cost: a message whose id is a safe integer at the start (`{"jsonrpc":"2.0","id":N`)
 * or at the end (`"id":N}`) is not scanned; others are, once.
 */

/** A client wrote a numeric id with a fraction, an exponent or as minus zero. */
export class IdLiteralError extends Error {
  constructor(readonly token: string) {
    super(`Invalid Request: a numeric id must be written as an integer, without fraction or exponent (got ${token}); send it as an integer or a string`);
    this.name = 'IdLiteralError';
  }
}

type Obj = Record<string, unknown>;

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
/** How messages begin when their id comes first (SDK requests, most clients'). */
const ID_FIRST = ['{"jsonrpc":"2.0","id":', '{"id":'];
const CANCELLED = 'notifications/cancelled';
/** A random 64-bit marker is in a message by chance never; a few tries bound the loop anyway. */
const MARK_ATTEMPTS = 4;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `JSON.parse` with exact ids: throws SyntaxError for text that is not JSON
 * and, with `strict`, IdLiteralError for a numeric id not written as an integer.
 */
export function parseJsonRpc(text: string, strict = false): unknown {
  const value: unknown = JSON.parse(text);
  if (Array.isArray(value)) {
    if (value.some((m) => needsTokens(m, strict, undefined))) {
      const tokens = idTokens(text) as IdTokens[];
      value.forEach((m, i) => revive(m, tokens[i] ?? {}, strict));
    }
  } else if (needsTokens(value, strict, text)) revive(value, idTokens(text) as IdTokens, strict);
  return value;
}

/** Whether the double `JSON.parse` made of an id may not be its literal. */
function needsTokens(m: unknown, strict: boolean, text: string | undefined): boolean {
  if (!isObj(m)) return false;
  const id = m.id;
  if (typeof id === 'number') {
    if (!Number.isSafeInteger(id) || Object.is(id, -0)) return true;
    if (strict && (text === undefined || !plainIdAtEdge(text, id))) return true;
  }
  return cancelledId(m) !== undefined;
}

/** The unsafe `params.requestId` of a `notifications/cancelled` (no other method's params are touched). */
function cancelledId(m: Obj): number | undefined {
  if (m.method !== CANCELLED) return undefined;
  const params = m.params;
  return isObj(params) && typeof params.requestId === 'number' && !Number.isSafeInteger(params.requestId) ? params.requestId : undefined;
}

/**
 * Whether the top-level id is written `id` exactly, found without scanning:
 * as the first member (after `"jsonrpc":"2.0"` or alone), or as the last.
 * Only a duplicate `id` member later with the same value written otherwise
 * (`…"id":1,…,"id":1.0}`) escapes this; it is then taken as `1`.
 */
function plainIdAtEdge(text: string, id: number): boolean {
  const t = String(id);
  for (const prefix of ID_FIRST) {
    if (text.startsWith(prefix) && text.startsWith(t, prefix.length)) {
      const next = text.charCodeAt(prefix.length + t.length);
      if (next === 0x2c || next === 0x7d) return true;
    }
  }
  let end = text.length - 1;
  while (end > 0 && text.charCodeAt(end) <= 0x20) end--;
  const start = end - t.length;
  if (text.charCodeAt(end) !== 0x7d || !text.startsWith(t, start) || !text.startsWith('"id":', start - 5)) return false;
  const before = text.charCodeAt(start - 6);
  return before === 0x2c || before === 0x7b;
}

function revive(m: unknown, tokens: IdTokens, strict: boolean): void {
  if (!isObj(m)) return;
  if (typeof m.id === 'number' && tokens.id !== undefined) {
    const exact = exactId(m.id, tokens.id);
    if (exact === undefined && strict) throw new IdLiteralError(tokens.id);
    if (exact !== undefined) m.id = exact;
  }
  const requestId = cancelledId(m);
  if (requestId !== undefined && tokens.requestId !== undefined) (m.params as Obj).requestId = exactId(requestId, tokens.requestId) ?? requestId;
}

/** The id an integer literal stands for, exactly; undefined for any other form. */
function exactId(parsed: number, token: string): number | bigint | undefined {
  if (!INTEGER.test(token) || token === '-0') return undefined;
  return Number.isSafeInteger(parsed) ? parsed : BigInt(token);
}

/**
 * `JSON.stringify` for messages that may hold bigint ids: each is written as its
 * digits. Messages without one cost one `JSON.stringify`, as before.
 */
export function stringifyJsonRpc(message: unknown): string {
  try {
    return JSON.stringify(message);
  } catch (err) {
    if (!(err instanceof TypeError) || !String(err.message).includes('BigInt')) throw err;
  }
  // A marker no string of the message holds: bigints become marked strings, then bare digits.
  for (let attempt = 0; attempt < MARK_ATTEMPTS; attempt++) {
    const mark = `\u0000id-${randomBytes(8).toString('hex')}:`;
    let clash = false;
    const text = JSON.stringify(message, (key: string, value: unknown) => {
      if (key.includes(mark) || (typeof value === 'string' && value.includes(mark))) clash = true;
      return typeof value === 'bigint' ? mark + value.toString() : value;
    });
    if (clash) continue;
    const escaped = JSON.stringify(mark).slice(1, -1);
    return text.split(`"${escaped}`).map((part, i) => (i === 0 ? part : part.replace(/^(-?\d+)"/, '$1'))).join('');
  }
  throw new Error('a message quotes every marker tried for its bigint ids');
}

/** An id as the message text writes it (`"a"`, `7`, `9007199254740993`), for error texts and logs. */
export function idText(id: unknown): string {
  return typeof id === 'bigint' ? id.toString() : (JSON.stringify(id) ?? String(id));
}
