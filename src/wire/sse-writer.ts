/** Server-sent-event framing for SSE replies (digest §2.3, §4.2). */

/** Headers for an SSE response stream; `X-Accel-Buffering: no` keeps proxies from buffering (digest §2.3). */
export const SSE_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
});

/** A comment frame; clients ignore it (digest §2.2 rule 6), proxies see traffic. */
export const SSE_HEARTBEAT = ': keepalive\n\n';

const LINE_BREAK = /\r\n|\r|\n/;

/** One event frame; data with line breaks becomes several `data:` lines, which the reader joins with '\n'. */
export function sseEvent(event: string, data: string, id?: string): string {
  assertSingleLine('event', event);
  let frame = `event: ${event}\n`;
  if (id !== undefined) {
    assertSingleLine('id', id);
    frame += `id: ${id}\n`;
  }
  for (const line of data.split(LINE_BREAK)) frame += `data: ${line}\n`;
  return frame + '\n';
}

/**
 * The event that primes a client to resume (2025-11-25 transports, SEP-1699):
 * an id and empty data, with `retry` telling how long to wait before reconnecting.
 */
export function ssePriming(id: string, retryMs: number): string {
  assertSingleLine('id', id);
  return `id: ${id}\nretry: ${retryMs}\ndata: \n\n`;
}

/** A JSON-RPC message as one event: `event: message\ndata: <json>\n\n`. */
export function sseMessage(json: unknown, event = 'message', id?: string): string {
  return sseEvent(event, JSON.stringify(json), id);
}

function assertSingleLine(field: string, value: string): void {
  // A line break here would inject fields into the stream.
  if (LINE_BREAK.test(value) || value.includes('\0')) throw new TypeError(`SSE ${field} must be a single line`);
}
