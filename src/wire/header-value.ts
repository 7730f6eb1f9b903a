/**
 * Value encoding for `Mcp-Name` and `Mcp-Param-*` (digest §2.5 "Value
 * encoding"): plain when safe, else `=?base64?<base64 of UTF-8>?=`.
 */

const PREFIX = '=?base64?';
const SUFFIX = '?=';
// Canonical padded base64, so one value has exactly one encoding.
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function looksLikeSentinel(s: string): boolean {
  return s.startsWith(PREFIX) && s.endsWith(SUFFIX);
}

/** True when `s` cannot travel as a plain field value: empty, sentinel look-alike, padded, or outside printable ASCII (TAB allowed). */
export function needsBase64(s: string): boolean {
  // [SDK] rule; it encodes '' too, where the SEP table sends it empty (digest §7.5).
  if (s === '' || looksLikeSentinel(s) || s !== s.trim()) return true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 || c > 0x7e) && c !== 0x09) return true;
  }
  return false;
}

/** The header form of a body value: string as is, number in decimal, boolean as `true`/`false`, base64 when needed. */
export function encodeHeaderValue(v: string | number | boolean): string {
  let s: string;
  if (typeof v === 'string') s = v;
  else if (typeof v === 'boolean') s = v ? 'true' : 'false';
  else {
    if (!Number.isFinite(v)) throw new RangeError(`Cannot encode ${v} as a header value`);
    s = String(v);
  }
  return needsBase64(s) ? `${PREFIX}${Buffer.from(s, 'utf8').toString('base64')}${SUFFIX}` : s;
}

/** Reverses encodeHeaderValue; a sentinel with invalid base64 or invalid UTF-8 inside is not ok (digest §2.6). */
export function decodeHeaderValue(raw: string): { ok: true; value: string } | { ok: false; reason: string } {
  if (!looksLikeSentinel(raw)) return { ok: true, value: raw };
  if (raw.length < PREFIX.length + SUFFIX.length) return { ok: false, reason: 'truncated base64 sentinel' };
  const b64 = raw.slice(PREFIX.length, raw.length - SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return { ok: false, reason: 'invalid base64 in header value' };
  try {
    return { ok: true, value: strictUtf8.decode(Buffer.from(b64, 'base64')) };
  } catch {
    return { ok: false, reason: 'base64 payload is not valid UTF-8' };
  }
}

/** True when `raw` holds CR, LF, NUL, DEL or another control character (TAB allowed). */
export function hasInvalidHeaderChars(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}
