import type { IncomingMessage } from 'node:http';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import type { CallSignal, UpstreamAuth } from '../contracts/upstream.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { parseJsonRpc, stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { isErrorResponse, isNotification, isRequest, isResultResponse, outcomeOf, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { BridgeError } from '../errors.js';
import { withVerbatim } from '../jsonrpc/verbatim.js';
import { SseParser } from '../wire/sse-parser.js';
import { safeRetry, type SafeRetryOptions } from './safe-retry.js';
import { exchange, readWhole, type UpstreamTarget } from './upstream-http.js';

/** One modern request as one HTTP POST (digest §2.2). */
export interface ModernExchange {
  target: UpstreamTarget;
  /** Every header of the POST, names lower case (protocol, param and the user's extra headers). */
  headers: Record<string, string>;
  body: JSONRPCRequest;
  /** `body` as JSON text, when the caller has it already (the client's own bytes); serialized here otherwise. */
  text?: string;
  /** Aborting closes the stream, which is the 2026 cancel (digest §1.9); the reason's message becomes the error. */
  signal?: CallSignal;
  onNotification?(n: JSONRPCNotification): void;
  logger: Logger;
  /** Bound on one line of an SSE reply (`--max-line`); longer fails the call. */
  maxLineBytes?: number;
  /** Failures before any response are sent again where that is safe (safe-retry.ts); absent: never. */
  retry?: SafeRetryOptions;
  /** The bridge's OAuth toward the upstream (upstream-http.ts adds the header and answers challenges). */
  auth?: UpstreamAuth;
}

const BODY_SNIPPET = 200;

function failure(message: string, data?: unknown): RpcOutcome {
  return { error: data === undefined ? { code: RpcCode.InternalError, message } : { code: RpcCode.InternalError, message, data } };
}

function abortMessage(signal: { readonly reason: unknown }): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'upstream call cancelled';
}

/**
 * POSTs one request and resolves with its outcome, whatever happens: a JSON or
 * SSE reply's response, the JSON-RPC error of an HTTP error body, or a -32603
 * naming the HTTP status, network failure, abort or dropped stream. Never rejects.
 */
export async function postModernRequest(x: ModernExchange): Promise<RpcOutcome> {
  const request = { method: 'POST', headers: x.headers, body: x.text ?? stringifyJsonRpc(x.body), signal: x.signal, auth: x.auth };
  let res: IncomingMessage;
  try {
    const send = () => exchange(x.target, request);
    res = await (x.retry ? safeRetry(x.body.method, x.retry, x.signal, send) : send());
  } catch (err) {
    if (x.signal?.aborted) return failure(abortMessage(x.signal));
    if (err instanceof BridgeError) return failure(err.message, { bridgeCode: err.code });
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return failure(`upstream unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const type = (res.headers['content-type'] ?? '').toLowerCase();
  try {
    if (type.startsWith('text/event-stream')) return await readSse(res, x);
    return await readJson(res, x);
  } catch (err) {
    if (x.signal?.aborted) return failure(abortMessage(x.signal));
    return failure(`upstream stream failed during ${x.body.method}: ${(err as Error).message}`);
  } finally {
    // A stream left open after the final response (or an abort) is closed: the connection cannot be reused.
    if (!res.complete) res.destroy();
  }
}

/** The outcome of an upstream response, with its bytes kept for a relay that passes it on unchanged (jsonrpc/verbatim.ts). */
function verbatimOutcome(msg: JSONRPCResponse, text: string): RpcOutcome {
  return withVerbatim(outcomeOf(msg), text, msg.id as RequestId);
}

async function readJson(res: IncomingMessage, x: ModernExchange): Promise<RpcOutcome> {
  const status = res.statusCode ?? 0;
  const ok = status >= 200 && status < 300;
  const text = (await readWhole(res)).toString('utf8');
  let msg: unknown;
  try {
    msg = text === '' ? undefined : parseJsonRpc(text);
  } catch {
    msg = undefined;
  }
  // A JSON-RPC error body wins over the status: modern servers send 400 + -32020/-32021/-32022, 404 + -32601 (digest §1.10).
  if (isErrorResponse(msg)) return verbatimOutcome(msg, text);
  if (ok && isResultResponse(msg)) return verbatimOutcome(msg, text);
  const statusLine = `upstream answered HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`;
  const snippet = text.slice(0, BODY_SNIPPET);
  if (!ok) return failure(`${statusLine} to ${x.body.method}`, { status, body: snippet });
  if (status === 202) return failure(`${statusLine} (accepted) without answering ${x.body.method}`, { status });
  return failure(`${statusLine} with a body that is not a JSON-RPC response`, { status, body: snippet });
}

/**
 * Whether a response on the POST's own stream answers its request: by the id,
 * or, for an id past 2^53, by the double a server that reads JSON numbers as
 * doubles made of it (9007199254740993 answered as 9007199254740992). The
 * client still gets its own id: the response is rebuilt under it.
 */
function answers(id: unknown, sent: RequestId): boolean {
  if (id === sent) return true;
  return typeof sent === 'bigint' && (typeof id === 'bigint' || typeof id === 'number') && Number(id) === Number(sent);
}

/** Reads SSE events until the request's own response; notifications on the way go to `onNotification`. */
function readSse(res: IncomingMessage, x: ModernExchange): Promise<RpcOutcome> {
  return new Promise((resolve, reject) => {
    let final: RpcOutcome | undefined;
    const parser = new SseParser((e) => {
      if (final !== undefined || e.event !== 'message' || e.data === '') return;
      let msg: unknown;
      try {
        msg = parseJsonRpc(e.data);
      } catch {
        x.logger.warn('upstream.sse.bad-json', { method: x.body.method, id: x.body.id });
        return;
      }
      if (isNotification(msg)) {
        x.onNotification?.(msg);
      } else if (isResultResponse(msg) || isErrorResponse(msg)) {
        if (answers((msg as { id?: unknown }).id, x.body.id)) final = verbatimOutcome(msg, e.data);
        else x.logger.warn('upstream.sse.foreign-response', { method: x.body.method, id: x.body.id });
      } else if (isRequest(msg)) {
        // Modern servers MUST NOT send requests (digest §1.5); nobody could answer it.
        x.logger.warn('upstream.sse.unexpected-request', { method: x.body.method, serverMethod: msg.method });
      }
    }, { maxLineBytes: x.maxLineBytes });
    const settle = (): void => {
      res.off('data', onData);
      if (final !== undefined) return resolve(final);
      if (x.signal?.aborted) return resolve(failure(abortMessage(x.signal)));
      const what = x.body.method === 'subscriptions/listen' ? 'the subscription stream dropped' : `the stream closed before ${x.body.method} was answered`;
      resolve(failure(`upstream ${what}`));
    };
    const onData = (chunk: Buffer): void => {
      try {
        parser.push(chunk);
      } catch (err) {
        res.off('data', onData);
        return reject(err);
      }
      if (final !== undefined) settle();
    };
    res.on('data', onData);
    res.once('end', () => {
      try {
        if (final === undefined) parser.end();
      } catch {
        // An unterminated over-long last line: the stream still ended without the answer.
      }
      settle();
    });
    // Aborted or dropped mid-stream: what was read decides, as at the end.
    res.once('close', settle);
    res.once('error', () => undefined);
  });
}
