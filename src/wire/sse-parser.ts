/**
 * WHATWG `text/event-stream` parsing (HTML §9.2.6 "Interpreting an event
 * stream"), used for SSE replies to POSTs (digest §2.2 rules 5–6).
 */
import { LineTooLongError } from './line-buffer.js';

const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** One dispatched event. `event` is 'message' when the stream named none. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/** Incremental event-stream parser; feed it chunks, it calls `onEvent` per dispatched event. */
export class SseParser {
  private readonly onEvent: (e: SseEvent) => void;
  private readonly maxLineBytes: number;
  private readonly decoder = new TextDecoder('utf-8');
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
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
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
    this.decoder.decode();
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
    this.line = '';
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
