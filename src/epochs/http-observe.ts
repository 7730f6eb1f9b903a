import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { BridgeError } from '../errors.js';
import { SseParser, type SseEvent } from '../wire/sse-parser.js';
import type { ProbeObservation } from './classify-probe.js';

/** How long one HTTP probe step may take. */
export const HTTP_PROBE_TIMEOUT_MS = 10_000;

type Obj = Record<string, unknown>;

/** Lower-cased names so a user header never doubles a protocol one. */
export function mergeHeaders(...layers: Record<string, string>[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const layer of layers) for (const [k, v] of Object.entries(layer)) out[k.toLowerCase()] = v;
  return out;
}

function networkMessage(err: unknown, timeoutMs: number, signal: AbortSignal): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** Reads an event stream until `stop` says enough, the stream ends, or the signal aborts. */
export async function readEvents(body: ReadableStream<Uint8Array>, stop: (e: SseEvent) => boolean): Promise<boolean> {
  let done = false;
  const parser = new SseParser((e) => {
    if (!done && stop(e)) done = true;
  });
  const reader = body.getReader();
  try {
    while (!done) {
      const chunk = await reader.read();
      if (chunk.done) break;
      parser.push(chunk.value);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return done;
}

/** The reply's JSON-RPC message: the response to `id` in a JSON or SSE body (else the first message seen). */
async function messageOf(res: Response, id: unknown): Promise<unknown> {
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (type.startsWith('text/event-stream') && res.body) {
    let first: unknown;
    let answer: unknown;
    await readEvents(res.body, (e) => {
      if (e.event !== 'message' || e.data === '') return false;
      try {
        const msg = JSON.parse(e.data) as Obj;
        first ??= msg;
        if (msg.id === id && ('result' in msg || 'error' in msg)) answer = msg;
      } catch {
        return false;
      }
      return answer !== undefined;
    });
    return answer ?? first;
  }
  const text = await res.text();
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** POSTs one probe request and reports what came back, as the classifier reads it. */
export async function observePost(url: string, headers: Record<string, string>, body: JSONRPCRequest, timeoutMs = HTTP_PROBE_TIMEOUT_MS, doFetch: typeof fetch = fetch): Promise<ProbeObservation> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await doFetch(url, {
      method: 'POST',
      headers: mergeHeaders(headers, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const message = await messageOf(res, body.id);
    const obs: ProbeObservation = { kind: 'http', status: res.status, message };
    const contentType = res.headers.get('content-type');
    if (contentType) obs.contentType = contentType;
    const sessionId = res.headers.get('mcp-session-id');
    if (sessionId) obs.sessionId = sessionId;
    return obs;
  } catch (err) {
    // A failed OAuth flow (the probe's fetch may be authorized) is the answer, not a network error.
    if (err instanceof BridgeError) throw err;
    return { kind: 'network-error', message: networkMessage(err, timeoutMs, controller.signal) };
  } finally {
    clearTimeout(timer);
  }
}

/** Ends an initialize-era probe session politely (digest §4.3 "Sessions"); a refusal does not matter. */
export async function deleteSession(url: string, headers: Record<string, string>, sessionId: string, protocolVersion: string, doFetch: typeof fetch = fetch): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 2_000);
  try {
    const res = await doFetch(url, {
      method: 'DELETE',
      headers: mergeHeaders(headers, { 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion }),
      signal: controller.signal,
    });
    await res.body?.cancel();
  } catch {
    // The session expires on its own.
  } finally {
    clearTimeout(timer);
  }
}

/** A short phrase for error messages: "HTTP 404 (text/html)", "no answer within 10000 ms". */
export function describeObservation(o: ProbeObservation): string {
  switch (o.kind) {
    case 'http': {
      const err = (o.message as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      const rpc = err && typeof err.code === 'number' ? ` with JSON-RPC error ${err.code}${typeof err.message === 'string' ? ` '${err.message}'` : ''}` : '';
      const type = o.contentType ? ` (${o.contentType.split(';')[0]})` : '';
      return `HTTP ${o.status}${rpc || type}`;
    }
    case 'no-endpoint':
      return `${o.status ? `HTTP ${o.status} ` : ''}without an endpoint event${o.detail ? ` (${o.detail})` : ''}`;
    case 'sse-endpoint':
      return `an endpoint event (${o.endpoint})`;
    case 'network-error':
      return o.message;
    case 'stdio-reply':
      return 'a reply';
    default:
      return o.kind;
  }
}
