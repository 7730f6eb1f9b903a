/**
 * WHATWG `text/event-stream` parsing (HTML §9.2.6 "Interpreting an event
 * stream"), used for SSE replies to POSTs (digest §2.2 rules 5–6).
 */
import { LineTooLongError } from './line-buffer.js';

const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
const LF = 0x0a;
const CR = 0x0d;

/** Where the last line break of `bytes` is, or -1. CR and LF never occur inside a UTF-8 sequence. */
function lastBreak(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= 0; i--) if (bytes[i] === LF || bytes[i] === CR) return i;
  return -1;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One dispatched event. `event` is 'message' when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/**
 * Incremental event-stream parser; feed it chunks, it calls `onEvent` per
 * dispatched event. Bytes are decoded up to a chunk's last line break, which is
 * always a character boundary; the bytes after it wait for the next break. No
 * TextDecoder: its ICU converter costs ~1.4 KiB of native memory per stream,
 * which every parked call and listen held (issue 17).
 */
export class SseParser {
  private readonly onEvent: (e: SseEvent) => void;
  private readonly maxLineBytes: number;
  /** Bytes after the last line break seen, not decoded yet. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private line = '';
  private started = false;
  private afterCR = false;
  private data: string[] = [];
  private eventType = '';
  private lastEventId = '';
  private retry: number | undefined;

  constructor(onEvent: (e: SseEvent) => void, opts: { maxLineBytes?: number } = {}) {
    this.onEvent = onEvent;
    this.maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Feeds a chunk; splits may fall anywhere, including inside a UTF-8 sequence or a CRLF pair. */
  push(chunk: string | Uint8Array): void {
    if (typeof chunk === 'string') return this.pushText(chunk);
    const bytes = asBuffer(chunk);
    const at = lastBreak(bytes);
    if (at === -1) {
      // Copied: a view would keep the reader's whole chunk alive as long as the line waits.
      this.pending.push(Buffer.from(bytes));
      this.pendingBytes += bytes.length;
      if (this.pendingBytes + this.line.length * 3 > this.maxLineBytes && this.pendingBytes + Buffer.byteLength(this.line, 'utf8') > this.maxLineBytes) this.tooLong();
      return;
    }
    let text: string;
    if (this.pending.length === 0) text = bytes.toString('utf8', 0, at + 1);
    else {
      this.pending.push(bytes.subarray(0, at + 1));
      text = Buffer.concat(this.pending).toString('utf8');
      this.pending = [];
      this.pendingBytes = 0;
    }
    if (at + 1 < bytes.length) {
      this.pending.push(Buffer.from(bytes.subarray(at + 1)));
      this.pendingBytes = bytes.length - at - 1;
    }
    this.pushText(text);
  }

  private pushText(chunk: string): void {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let i = 0;
    // A CR ends a line; a LF right after it belongs to the same line break, even across chunks.
    if (this.afterCR && text.charCodeAt(0) === 0x0a) i = 1;
    this.afterCR = false;
    while (i < text.length) {
      const cr = text.indexOf('\r', i);
      const lf = text.indexOf('\n', i);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) {
        this.line += text.slice(i);
        this.checkLength();
        return;
      }
      this.line += text.slice(i, end);
      this.checkLength();
      const completed = this.line;
      this.line = '';
      i = end + 1;
      if (text.charCodeAt(end) === 0x0d) {
        if (i === text.length) this.afterCR = true;
        else if (text.charCodeAt(i) === 0x0a) i++;
      }
      this.processLine(completed);
    }
  }

  /** End of stream: an event without its closing blank line is discarded, as the spec says. */
  end(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.line = '';
    this.afterCR = false;
    this.data = [];
    this.eventType = '';
    this.retry = undefined;
  }

  private checkLength(): void {
    // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
    if (this.line.length * 3 <= this.maxLineBytes) return;
    if (Buffer.byteLength(this.line, 'utf8') <= this.maxLineBytes) return;
    this.tooLong();
  }

  private tooLong(): never {
    this.line = '';
    this.pending = [];
    this.pendingBytes = 0;
    this.data = [];
    throw new LineTooLongError(this.maxLineBytes);
  }

  private processLine(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.applyField(field, value);
  }

  private dispatch(): void {
    const data = this.data;
    const retry = this.retry;
    const type = this.eventType;
    this.data = [];
    this.eventType = '';
    this.retry = undefined;
    if (data.length === 0) return;
    const e: SseEvent = { event: type === '' ? 'message' : type, data: data.join('\n') };
    if (this.lastEventId !== '') e.id = this.lastEventId;
    if (retry !== undefined) e.retry = retry;
    this.onEvent(e);
  }

  // HTML §9.2.6 "process the field"; unknown fields are ignored.
  private applyField(field: string, value: string): void {
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventType = value;
    else if (field === 'id') {
      if (!value.includes('\0')) this.lastEventId = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.retry = Number(value);
  }
}
