/**
 * Where a JSON-RPC message keeps its ids, as written: the raw text of the
 * top-level `id` member and of `params.requestId` (the id a
 * `notifications/cancelled` names). Read from the text `JSON.parse` already
 * accepted, so the scanner never meets malformed JSON; like `JSON.parse`, the
 * last of duplicate members wins, and escaped keys (`"\u0069d"`) count.
 */
export interface IdTokens {
  id?: string;
  requestId?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** The id tokens of a message, or of each element of a batch (`{}` for an element that is not an object). */
export function idTokens(text: string): IdTokens | IdTokens[] {
  const s = new Scanner(text);
  s.space();
  if (s.peek() !== OPEN_BRACKET) return s.peek() === OPEN_BRACE ? s.message() : {};
  const batch: IdTokens[] = [];
  s.i++;
  for (s.space(); s.peek() !== CLOSE_BRACKET; s.space()) {
    batch.push(s.peek() === OPEN_BRACE ? s.message() : (s.skipValue(), {}));
    s.space();
    if (s.peek() === COMMA) s.i++;
  }
  return batch;
}

class Scanner {
  i = 0;
  constructor(private readonly s: string) {}

  peek(): number {
    return this.s.charCodeAt(this.i);
  }

  space(): void {
    for (let c = this.peek(); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = this.peek()) this.i++;
  }

  /** A top-level message object: its `id`, and `requestId` inside `params`. */
  message(): IdTokens {
    const out: IdTokens = {};
    this.members((key, start) => {
      if (key === 'id') out.id = this.s.slice(start, this.i);
      else if (key === 'params' && this.s.charCodeAt(start) === OPEN_BRACE) {
        this.i = start;
        this.members((inner, at) => {
          if (inner === 'requestId') out.requestId = this.s.slice(at, this.i);
        });
      }
    });
    return out;
  }

  /** Walks one object from its `{`; `visit` runs after each member's value was skipped, with the value's start. */
  private members(visit: (key: string, valueStart: number) => void): void {
    this.i++;
    for (this.space(); this.peek() !== CLOSE_BRACE; this.space()) {
      const key = this.key();
      this.space();
      this.i++; // ':'
      this.space();
      const start = this.i;
      this.skipValue();
      visit(key, start);
      this.space();
      if (this.peek() === COMMA) this.i++;
    }
    this.i++;
  }

  private key(): string {
    const start = this.i;
    this.skipString();
    const raw = this.s.slice(start, this.i);
    return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  /** From an opening quote to just past its closing one. */
  private skipString(): void {
    let q = this.s.indexOf('"', this.i + 1);
    while (this.escaped(q)) q = this.s.indexOf('"', q + 1);
    this.i = q + 1;
  }

  /** Whether the quote at `q` is preceded by an odd run of backslashes. */
  private escaped(q: number): boolean {
    let n = 0;
    while (this.s.charCodeAt(q - 1 - n) === BACKSLASH) n++;
    return n % 2 === 1;
  }

  skipValue(): void {
    const c = this.peek();
    if (c === QUOTE) return this.skipString();
    if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
      // A number or a literal: runs to the next delimiter.
      let j = this.i;
      for (let d = this.s.charCodeAt(j); j < this.s.length && d !== COMMA && d !== CLOSE_BRACE && d !== CLOSE_BRACKET && d > 0x20; d = this.s.charCodeAt(++j));
      this.i = j;
      return;
    }
    let depth = 0;
    do {
      const d = this.peek();
      if (d === QUOTE) {
        this.skipString();
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) depth--;
      this.i++;
    } while (depth > 0);
  }
}
