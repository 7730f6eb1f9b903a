import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import { RpcCode } from '../jsonrpc/codes.js';
import { isErrorResponse, isNotification, isRequest, isResultResponse, outcomeOf, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { SseParser } from '../wire/sse-parser.js';

/** One modern request as one HTTP POST (digest §2.2). */
export interface ModernExchange {
  url: string;
  /** Every header of the POST (protocol, param and the user's extra headers). */
  headers: Record<string, string>;
  body: JSONRPCRequest;
  /** Aborting closes the stream, which is the 2026 cancel (digest §1.9); the reason's message becomes the error. */
  signal: AbortSignal;
  onNotification?(n: JSONRPCNotification): void;
  logger: Logger;
  /** Defaults to the global fetch (the daemon passes one that bounds SSE line length). */
  fetch?: typeof fetch;
}

const BODY_SNIPPET = 200;

function failure(message: string, data?: unknown): RpcOutcome {
  return { error: data === undefined ? { code: RpcCode.InternalError, message } : { code: RpcCode.InternalError, message, data } };
}

function abortMessage(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'upstream call cancelled';
}

/**
 * POSTs one request and resolves with its outcome, whatever happens: a JSON or
 * SSE reply's response, the JSON-RPC error of an HTTP error body, or a -32603
 * naming the HTTP status, network failure, abort or dropped stream. Never rejects.
 */
export async function postModernRequest(x: ModernExchange): Promise<RpcOutcome> {
  let res: Response;
  try {
    res = await (x.fetch ?? fetch)(x.url, { method: 'POST', headers: x.headers, body: JSON.stringify(x.body), signal: x.signal });
  } catch (err) {
    if (x.signal.aborted) return failure(abortMessage(x.signal));
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return failure(`upstream unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  try {
    if (type.startsWith('text/event-stream')) return await readSse(res, x);
    return await readJson(res, x);
  } catch (err) {
    if (x.signal.aborted) return failure(abortMessage(x.signal));
    return failure(`upstream stream failed during ${x.body.method}: ${(err as Error).message}`);
  } finally {
    // Releases the connection when we stop reading early (final response seen, or abort). A body
    // read whole is already released; touching `res.body` then would build a stream just to cancel it.
    if (!res.bodyUsed) res.body?.cancel().catch(() => undefined);
  }
}

async function readJson(res: Response, x: ModernExchange): Promise<RpcOutcome> {
  const text = await res.text();
  let msg: unknown;
  try {
    msg = text === '' ? undefined : JSON.parse(text);
  } catch {
    msg = undefined;
  }
  // A JSON-RPC error body wins over the status: modern servers send 400 + -32020/-32021/-32022, 404 + -32601 (digest §1.10).
  if (isErrorResponse(msg)) return outcomeOf(msg);
  if (res.ok && isResultResponse(msg)) return outcomeOf(msg);
  const statusLine = `upstream answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const snippet = text.slice(0, BODY_SNIPPET);
  if (!res.ok) return failure(`${statusLine} to ${x.body.method}`, { status: res.status, body: snippet });
  if (res.status === 202) return failure(`${statusLine} (accepted) without answering ${x.body.method}`, { status: res.status });
  return failure(`${statusLine} with a body that is not a JSON-RPC response`, { status: res.status, body: snippet });
}

async function readSse(res: Response, x: ModernExchange): Promise<RpcOutcome> {
  if (!res.body) return failure(`upstream answered ${x.body.method} with an empty event stream`);
  let final: RpcOutcome | undefined;
  const parser = new SseParser((e) => {
    if (final !== undefined || e.event !== 'message' || e.data === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(e.data);
    } catch {
      x.logger.warn('upstream.sse.bad-json', { method: x.body.method, id: x.body.id });
      return;
    }
    if (isNotification(msg)) {
      x.onNotification?.(msg);
    } else if (isResultResponse(msg) || isErrorResponse(msg)) {
      if ((msg as { id?: unknown }).id === x.body.id) final = outcomeOf(msg);
      else x.logger.warn('upstream.sse.foreign-response', { method: x.body.method, id: x.body.id });
    } else if (isRequest(msg)) {
      // Modern servers MUST NOT send requests (digest §1.5); nobody could answer it.
      x.logger.warn('upstream.sse.unexpected-request', { method: x.body.method, serverMethod: msg.method });
    }
  });
  const reader = res.body.getReader();
  let ended = false;
  try {
    while (final === undefined) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      parser.push(value);
    }
  } finally {
    // The caller's `res.body.cancel()` is refused while a reader holds the lock (and `bodyUsed` is
    // already true), so a stream left open after the final response is cancelled here, through the reader.
    if (!ended) reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  if (final === undefined) parser.end();
  if (final !== undefined) return final;
  if (x.signal.aborted) return failure(abortMessage(x.signal));
  const what = x.body.method === 'subscriptions/listen' ? 'the subscription stream dropped' : `the stream closed before ${x.body.method} was answered`;
  return failure(`upstream ${what}`);
}
