import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { CallHandlers } from '../contracts/upstream.js';
import { BridgeError, TransportError, type BridgeErrorCode } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { isErrorResponse, type RpcErrorBody, type RpcOutcome } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { sleep } from './get-stream.js';
import type { HttpSessionClient } from './http-session-client.js';
import { readMessageStream, type StreamCursor } from './message-stream-reader.js';
import type { UpstreamReply } from './upstream-reply.js';
import type { LazyAbort } from './lazy-abort.js';

/** One call in flight on a Streamable HTTP session. */
export interface PendingCall {
  id: RequestId;
  method: string;
  handlers: CallHandlers;
  /** Aborts this call's POST (and resumed GETs). */
  ac: LazyAbort;
  settled: boolean;
  /** Resolves the call once; later calls are ignored. */
  settle(outcome: RpcOutcome): void;
}

export interface PostExchangeHooks {
  /** Routes a message that arrived on `call`'s stream. */
  dispatch(msg: unknown, call: PendingCall): void;
  /**
   * The server no longer knows the session the message was sent with (digest §4.3
   * Sessions). Resolves true once the session runs under a new `Mcp-Session-Id`
   * (the message may be sent again), false when it has ended instead.
   */
  expire(staleSessionId: string | undefined): Promise<boolean>;
  logger: Logger;
}

/** How often a POST stream that closed before its response is resumed with GET + Last-Event-ID. */
const MAX_RESUMES = 5;
const MAX_RETRY_MS = 10_000;
const SEND_TIMEOUT_MS = 30_000;

/**
 * The POSTs of one session (digest §4.3 POST): a call is one POST whose JSON
 * or SSE answer carries its response, possibly after server requests and
 * notifications; notifications and our responses are POSTs answered 202.
 */
export class PostExchange {
  private readonly client: HttpSessionClient;
  private readonly hooks: PostExchangeHooks;

  constructor(client: HttpSessionClient, hooks: PostExchangeHooks) {
    this.client = client;
    this.hooks = hooks;
  }

  /**
   * Runs one call to its end; every path settles it (never rejects). A call the
   * server refused because it forgot the session was never processed, so it is
   * sent once more on the re-initialized session.
   */
  async run(call: PendingCall, body: JSONRPCRequest): Promise<void> {
    const cursor: StreamCursor = {};
    try {
      if (!(await this.#post(call, body, cursor))) return;
      // 2025-11-25 polling: the server may close the connection without ending the stream (digest §4.3).
      for (let i = 0; !call.settled && cursor.lastEventId !== undefined && i < MAX_RESUMES; i++) {
        await sleep(Math.min(cursor.retryMs ?? 1_000, MAX_RETRY_MS), call.ac);
        if (call.settled) return;
        const more = await this.#resume(call, cursor);
        if (more === 'settled') return;
        if (more === 'refused') break;
      }
      call.settle(internal(`upstream closed the ${call.method} stream without answering`, 'BRIDGE_ERR_UPSTREAM_CLOSED'));
    } catch (err) {
      // Aborted calls were settled by whoever aborted them; settle() ignores the rest.
      if (err instanceof BridgeError) call.settle(internal(err.message, err.code));
      else call.settle(internal(`upstream connection failed during ${call.method}: ${(err as Error).message}`, 'BRIDGE_ERR_UPSTREAM_UNREACHABLE'));
    }
  }

  /**
   * The call's POST and its answer, read to the end. False once the call is
   * settled. A separate frame from `run`, so nothing of the response outlives
   * the read while a polled stream waits to be resumed.
   */
  async #post(call: PendingCall, body: JSONRPCRequest, cursor: StreamCursor): Promise<boolean> {
    let res: UpstreamReply;
    for (let attempt = 0; ; attempt++) {
      const sentWith = this.client.sessionId;
      res = await this.client.post(body, call.ac);
      const gone = await sessionGone(res, sentWith);
      if (!gone) break;
      if (attempt === 0 && (await this.hooks.expire(sentWith)) && !call.settled) {
        this.hooks.logger.info('upstream.session_retry', { method: call.method, detail: gone.detail });
        continue;
      }
      call.settle(internal(`upstream session expired (${gone.detail}) before ${call.method} was processed`, 'BRIDGE_ERR_UPSTREAM_CLOSED'));
      return false;
    }
    if (!res.ok) {
      call.settle({ error: await errorFromStatus(res) });
      return false;
    }
    await this.#read(call, res, cursor);
    return !call.settled;
  }

  /** GET + Last-Event-ID for the rest of the call's stream (digest §4.3 Resumability), read to its end. */
  async #resume(call: PendingCall, cursor: StreamCursor): Promise<'read' | 'refused' | 'settled'> {
    const sentWith = this.client.sessionId;
    const again = await this.client.get(cursor.lastEventId, call.ac);
    if (again.status === 404) {
      await drain(again);
      // The response this stream owed died with the session; the call cannot be resumed.
      void this.hooks.expire(sentWith);
      call.settle(internal(`upstream session expired while ${call.method} was being answered`, 'BRIDGE_ERR_UPSTREAM_CLOSED'));
      return 'settled';
    }
    if (!again.ok) {
      await drain(again);
      return 'refused';
    }
    await this.#read(call, again, cursor, true);
    return call.settled ? 'settled' : 'read';
  }

  /**
   * Reads one of the call's streams. A resumed stream is left once the call is
   * answered: servers keep it open for whatever else the stream id would carry
   * (SDK servers re-register it, with keep-alives), and nothing else will come.
   */
  #read(call: PendingCall, res: UpstreamReply, cursor: StreamCursor, resumed = false): Promise<StreamCursor> {
    return readMessageStream(
      res,
      {
        onMessage: (m) => {
          this.hooks.dispatch(m, call);
          if (resumed && call.settled) cursor.stop?.();
        },
        onInvalid: () => this.hooks.logger.warn('upstream.message.not_json', { method: call.method }),
      },
      cursor,
    );
  }

  /** POSTs a notification or a response; rejects unless the server accepts it (202, or any 2xx). */
  async send(msg: JSONRPCMessage): Promise<void> {
    const sentWith = this.client.sessionId;
    const res = await this.client.post(msg, AbortSignal.timeout(SEND_TIMEOUT_MS));
    const gone = await sessionGone(res, sentWith);
    if (gone) {
      // A notification or a response belongs to the old session: it is not sent again.
      void this.hooks.expire(sentWith);
      throw new TransportError(res.status, '', `upstream session expired (${gone.detail})`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new TransportError(res.status, text.slice(0, 500));
    }
    await drain(res);
  }
}

/**
 * Whether a POST was refused because the server forgot the session it carried:
 * 404 (digest §4.3 Sessions), or the 400 "No valid session ID" that servers
 * built on the SDK examples (server-everything among them) answer instead.
 * A body read to decide is consumed; anything else is left for the caller.
 */
async function sessionGone(res: UpstreamReply, sentWith: string | undefined): Promise<{ detail: string } | undefined> {
  if (sentWith === undefined || (res.status !== 404 && res.status !== 400)) return undefined;
  if (res.status === 404) {
    await drain(res);
    return { detail: 'HTTP 404' };
  }
  // Read once: text() answers the same again for errorFromStatus when it is not a session refusal.
  const text = await res.text().catch(() => '');
  let message = '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (isErrorResponse(parsed)) message = String(parsed.error.message);
  } catch {
    // not JSON: not a session refusal
  }
  if (!/session/i.test(message)) return undefined;
  await drain(res);
  return { detail: `HTTP 400: ${message.slice(0, 100)}` };
}

/** A non-2xx answer: the server's own JSON-RPC error when it sent one, else the status. */
async function errorFromStatus(res: UpstreamReply): Promise<RpcErrorBody> {
  const text = await res.text().catch(() => '');
  try {
    const parsed: unknown = JSON.parse(text);
    if (isErrorResponse(parsed)) return parsed.error as RpcErrorBody;
  } catch {
    // not JSON: fall through
  }
  return { code: RpcCode.InternalError, message: `upstream answered HTTP ${res.status}`, data: { status: res.status, body: text.slice(0, 500) } };
}

async function drain(res: UpstreamReply): Promise<void> {
  await res.discard();
}

function internal(message: string, bridgeCode: BridgeErrorCode): RpcOutcome {
  return { error: { code: RpcCode.InternalError, message, data: { bridgeCode } } };
}
