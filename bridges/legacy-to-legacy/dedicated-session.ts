import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyChannel, LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';
import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { errorResponse, isResultResponse } from '../../src/jsonrpc/messages.js';
import { RpcError, TransportError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { relayCall } from './relay-call.js';
import { linkedSignal } from '../../src/links/linked-signal.js';

type Params = Record<string, unknown> | undefined;

/** The RpcError that refuses a downstream session: the server's own refusal, or -32603 naming a local failure. */
export function upstreamRefusal(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // The upstream's HTTP status stays readable: --auth pass-through hands its 401/403 to the client.
  const data = err instanceof TransportError ? { status: err.status } : undefined;
  return new RpcError(RpcCode.InternalError, `upstream session could not be opened: ${message}`, { cause: err, data });
}

/** Opens an upstream session; rejects with `upstreamRefusal`. */
export async function openUpstream(link: LegacyLink, init: UpstreamInit): Promise<LegacyUpstreamSession> {
  try {
    return await link.openSession(init);
  } catch (err) {
    throw upstreamRefusal(err);
  }
}

/**
 * One downstream legacy session with an upstream session of its own (remote
 * HTTP, http+sse, WebSocket upstreams). Everything is relayed; the upstream keeps
 * the session state itself. The bridge remembers the log level and subscriptions
 * only to restore them when an expired upstream session has to be re-opened
 * (digest §4.3 Sessions: 404 → re-initialize).
 */
export class DedicatedSession implements LegacySessionHandler {
  readonly #abort = new AbortController();
  #session: LegacyUpstreamSession;
  #reopening: Promise<LegacyUpstreamSession> | undefined;
  #level: Params;
  readonly #subscribed = new Set<string>();

  constructor(
    session: LegacyUpstreamSession,
    private readonly link: LegacyLink,
    private readonly channel: LegacyChannel,
    private readonly opts: { logger: Logger; callTimeoutMs: number },
  ) {
    this.#session = this.#wire(session);
  }

  async handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    if (this.#abort.signal.aborted) return errorResponse(req.id, { code: RpcCode.InternalError, message: 'session closed' });
    let session: LegacyUpstreamSession;
    try {
      session = await this.#current();
    } catch (err) {
      return errorResponse(req.id, { code: RpcCode.InternalError, message: `upstream session closed and could not be re-opened: ${(err as Error).message}` });
    }
    const linked = linkedSignal([ctx.signal, this.#abort.signal]);
    const response = await relayCall(session, req, ctx, { signal: linked.signal, timeoutMs: this.opts.callTimeoutMs, serverRequests: true }).finally(linked.dispose);
    if (isResultResponse(response)) this.#remember(req.method, req.params as Params);
    return response;
  }

  handleNotification(n: JSONRPCNotification): void {
    if (this.#session.closed) return;
    this.#session.notify(n.method, n.params as Params).catch((err: unknown) => {
      this.opts.logger.debug('l2l.notify_upstream_failed', { method: n.method, err });
    });
  }

  async close(): Promise<void> {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    const reopening = this.#reopening;
    await this.#session.close();
    if (reopening) await reopening.then((s) => s.close(), () => undefined);
  }

  /** The session's unsolicited traffic belongs to this client alone (digest §5.3 case A item 8 does not arise). */
  #wire(session: LegacyUpstreamSession): LegacyUpstreamSession {
    session.setUnsolicitedHandlers({
      notification: (n) => {
        // A server cancelling its own request names its wire id, which the client never saw (digest §5.5).
        if (n.method !== 'notifications/cancelled') this.channel.notify(n);
      },
      request: (r) => this.channel.request(r.method, r.params as Params),
    });
    return session;
  }

  #remember(method: string, params: Params): void {
    const uri = params?.uri;
    if (method === 'logging/setLevel') this.#level = params;
    else if (method === 'resources/subscribe' && typeof uri === 'string') this.#subscribed.add(uri);
    else if (method === 'resources/unsubscribe' && typeof uri === 'string') this.#subscribed.delete(uri);
  }

  #current(): Promise<LegacyUpstreamSession> {
    if (!this.#session.closed) return Promise.resolve(this.#session);
    this.#reopening ??= this.#reopen().finally(() => {
      this.#reopening = undefined;
    });
    return this.#reopening;
  }

  async #reopen(): Promise<LegacyUpstreamSession> {
    const previous = this.#session;
    const session = this.#wire(await openUpstream(this.link, previous.init));
    if (this.#abort.signal.aborted) {
      await session.close();
      throw new Error('session closed');
    }
    this.#session = session;
    this.opts.logger.info('l2l.upstream_reopened', { previous: previous.id, upstreamSession: session.id });
    const timeoutMs = this.opts.callTimeoutMs;
    if (this.#level) await session.call({ method: 'logging/setLevel', params: this.#level }, { timeoutMs });
    for (const uri of this.#subscribed) await session.call({ method: 'resources/subscribe', params: { uri } }, { timeoutMs });
    return session;
  }
}
