/**
 * A nesting bound checked on the raw JSON text, before `JSON.parse`: a body of
 * `[[[[…]]]]` parses fine in V8, but every recursive walk after it (redaction,
 * canonical JSON, re-serialisation toward the upstream) would then risk a
 * stack overflow. Scanning the text is linear and allocates nothing.
 */

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when `text` nests objects and arrays deeper than `maxDepth` (`{}` is one
 * level; brackets inside strings do not count). Stops at the first level past it.
 */
export function exceedsJsonDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}
