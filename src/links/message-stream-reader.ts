import { TransportError } from '../errors.js';
import { parseJsonRpc } from '../jsonrpc/id-codec.js';
import { SseParser } from '../wire/sse-parser.js';
import type { UpstreamReply } from './upstream-reply.js';

/** Where a Streamable HTTP stream stopped: what a resuming GET needs (digest §4.3 Resumability). */
export interface StreamCursor {
  lastEventId?: string;
  /** The server's `retry:` field, in milliseconds. */
  retryMs?: number;
  /**
   * Set while an event stream is being read: stops reading it (the body is
   * cancelled, which closes its connection) and lets the read resolve as if
   * the stream had ended, the cursor pointing at the last event seen.
   */
  stop?: () => void;
}

export interface MessageStreamHandlers {
  /** One JSON-RPC value: batches (2025-03-26) are split before this is called. */
  onMessage(msg: unknown): void;
  /** An SSE `message` event whose data is not JSON. */
  onInvalid?(data: string): void;
  /** Any event arrived (including priming events without data). */
  onEvent?(): void;
}

/**
 * Reads a Streamable HTTP response body, `application/json` or
 * `text/event-stream`, handing each message to `onMessage` as it arrives.
 * Resolves when the body ends, with the cursor updated in place; rejects when
 * the connection fails (the upstream died, or the fetch was aborted).
 */
export async function readMessageStream(res: UpstreamReply, handlers: MessageStreamHandlers, cursor: StreamCursor = {}): Promise<StreamCursor> {
  const type = (res.header('content-type') ?? '').toLowerCase();
  if (type.includes('text/event-stream')) {
    await readSse(res, handlers, cursor);
  } else if (type.includes('json')) {
    const text = await res.text();
    if (text.trim() !== '') {
      let value: unknown;
      try {
        value = parseJsonRpc(text);
      } catch (err) {
        throw new TransportError(res.status, text.slice(0, 500), 'upstream answered with a body that is not JSON', { cause: err });
      }
      deliver(value, handlers);
    }
  } else {
    // 202 Accepted and friends carry no messages; drain whatever is there.
    await res.discard();
  }
  return cursor;
}

async function readSse(res: UpstreamReply, handlers: MessageStreamHandlers, cursor: StreamCursor): Promise<void> {
  const parser = new SseParser((e) => {
    handlers.onEvent?.();
    if (e.id !== undefined) cursor.lastEventId = e.id;
    if (e.retry !== undefined) cursor.retryMs = e.retry;
    // Only `message` events carry JSON-RPC; priming events have empty data (digest §4.3, 2025-11-25).
    if (e.event !== 'message' || e.data.trim() === '') return;
    let value: unknown;
    try {
      value = parseJsonRpc(e.data);
    } catch {
      handlers.onInvalid?.(e.data);
      return;
    }
    deliver(value, handlers);
  }, res.maxLineBytes === undefined ? {} : { maxLineBytes: res.maxLineBytes });
  cursor.stop = () => void res.discard();
  try {
    await res.stream((chunk) => pushLines(parser, chunk));
    parser.end();
  } finally {
    cursor.stop = undefined;
  }
}

/** Chunks at least this long go to the parser line by line. */
const SPLIT_FROM_BYTES = 1024;

/**
 * The parser keeps the last event id for the rest of the stream as a slice of
 * the text it was decoded in; fed a large chunk whole, that slice holds the
 * whole chunk's text (2.6 KiB per held elicitation stream). Line by line, it
 * holds its own line.
 */
function pushLines(parser: SseParser, chunk: Uint8Array): void {
  if (chunk.length < SPLIT_FROM_BYTES) return parser.push(chunk);
  for (let start = 0; start < chunk.length; ) {
    const lf = chunk.indexOf(0x0a, start);
    const end = lf === -1 ? chunk.length : lf + 1;
    parser.push(chunk.subarray(start, end));
    start = end;
  }
}

function deliver(value: unknown, handlers: MessageStreamHandlers): void {
  if (Array.isArray(value)) for (const m of value) handlers.onMessage(m);
  else handlers.onMessage(value);
}
