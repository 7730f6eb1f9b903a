/** Newline-delimited JSON framing for stdio and other byte streams (digest §3 "Framing"). */

const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
const LF = 0x0a;

/** A line grew past `maxLineBytes` before its newline arrived; the buffer was reset. */
export class LineTooLongError extends Error {
  /** Lines completed in the same push before the oversized one. */
  readonly completed: string[];
  constructor(maxLineBytes: number, completed: string[] = []) {
    super(`Line exceeds ${maxLineBytes} bytes`);
    this.name = 'LineTooLongError';
    this.completed = completed;
  }
}

/**
 * Splits a byte stream into lines. Works on bytes, so a chunk may end inside a
 * UTF-8 sequence; lines are decoded only once complete.
 */
export class LineBuffer {
  private readonly maxLineBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(opts: { maxLineBytes?: number } = {}) {
    this.maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Complete lines (without \n or \r\n); blank lines skipped; throws LineTooLongError past the limit (buffer then reset). */
  push(chunk: Buffer | string): string[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const lines: string[] = [];
    let start = 0;
    for (let nl = bytes.indexOf(LF, start); nl !== -1; nl = bytes.indexOf(LF, start)) {
      const piece = bytes.subarray(start, nl);
      start = nl + 1;
      if (this.pendingBytes + piece.length > this.maxLineBytes) this.overflow(lines);
      const line = this.take(piece);
      if (line !== undefined) lines.push(line);
    }
    if (start < bytes.length) {
      const rest = bytes.subarray(start);
      if (this.pendingBytes + rest.length > this.maxLineBytes) this.overflow(lines);
      // Copy: the caller may reuse its chunk buffer.
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
    return lines;
  }

  /** What is left without a newline, if anything, and resets. */
  flush(): string | undefined {
    return this.take(Buffer.alloc(0));
  }

  private take(tail: Buffer): string | undefined {
    const whole = this.pending.length === 0 ? tail : Buffer.concat([...this.pending, tail]);
    this.pending = [];
    this.pendingBytes = 0;
    let text = whole.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return text.trim() === '' ? undefined : text;
  }

  private overflow(completed: string[]): never {
    this.pending = [];
    this.pendingBytes = 0;
    throw new LineTooLongError(this.maxLineBytes, completed);
  }
}
