import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { EventSource } from 'eventsource';
import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../contracts/upstream.js';
import { DEFAULT_OPTIONS } from '../daemon/options.js';
import { BridgeError, TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { safeUrl, type HttpLinkOptions } from './legacy-http-link.js';
import type { MessagePipe } from './message-pipe.js';
import { openPipeSession } from './pipe-session.js';

/** How long the server has to send its `endpoint` event after the GET. */
const ENDPOINT_WAIT_MS = 10_000;
const POST_TIMEOUT_MS = 30_000;

/**
 * A `LegacyLink` to a 2024-11-05 HTTP+SSE server (digest §4.2): one GET
 * stream per session, whose `endpoint` event names the POST URL for every
 * client message; every server message arrives as a `message` event.
 */
export class SseLink implements LegacyLink {
  readonly kind = 'http+sse' as const;
  private readonly opts: HttpLinkOptions;
  private readonly log: Logger;
  private readonly sessions = new Set<LegacyUpstreamSession>();
  private closing = false;

  /** `opts.url` is the SSE URL (`…/sse`). */
  constructor(opts: HttpLinkOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ link: this.kind, upstream: safeUrl(opts.url) });
  }

  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    if (this.closing) throw new BridgeError('BRIDGE_ERR_CLOSED', 'the http+sse link is closed');
    const pipe = await SsePipe.connect(this.opts, this.log);
    const session = await openPipeSession(pipe, init, {
      logger: this.log,
      callTimeoutMs: this.opts.callTimeoutMs ?? DEFAULT_OPTIONS.callTimeoutMs,
      kind: 'http+sse',
    });
    if (this.closing) {
      await session.close();
      throw new BridgeError('BRIDGE_ERR_CLOSED', 'the http+sse link closed while the session opened');
    }
    this.sessions.add(session);
    session.onClose(() => this.sessions.delete(session));
    return session;
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions].map((s) => s.close()));
    this.sessions.clear();
  }
}

/** One http+sse connection as a MessagePipe: the stream in, POSTs to the endpoint out. */
class SsePipe implements MessagePipe {
  private listener: ((msg: unknown) => void) | undefined;
  private readonly early: unknown[] = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private readonly ac = new AbortController();
  private closeReason: string | undefined;

  private constructor(
    private readonly es: EventSource,
    private readonly endpoint: URL,
    private readonly opts: HttpLinkOptions,
    private readonly log: Logger,
  ) {
    es.addEventListener('message', (e) => this.receive(e.data));
    es.addEventListener('error', (e) => {
      // eventsource would reconnect, but a new GET is a new server session: this one is over.
      const status = e.code ? ` (HTTP ${e.code})` : '';
      this.finish(`http+sse stream dropped${status}${e.message ? `: ${e.message}` : ''}`);
    });
  }

  /** GETs the SSE URL and resolves once the `endpoint` event named a same-origin POST URL. */
  static connect(opts: HttpLinkOptions, log: Logger): Promise<SsePipe> {
    const doFetch = opts.fetch ?? globalThis.fetch;
    const sseUrl = new URL(opts.url);
    const es = new EventSource(sseUrl, {
      // Configured headers first: the Accept and Last-Event-ID eventsource sets must survive.
      fetch: (url, init) => doFetch(url, { ...init, headers: { ...opts.headers, ...init.headers } }),
    });
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        clearTimeout(timer);
        es.close();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `no endpoint event from ${safeUrl(opts.url)} within ${ENDPOINT_WAIT_MS} ms`)),
        ENDPOINT_WAIT_MS,
      );
      es.addEventListener('error', (e) => {
        const message = `cannot open the http+sse stream at ${safeUrl(opts.url)}${e.message ? `: ${e.message}` : ''}`;
        fail(e.code ? new TransportError(e.code, '', message) : new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', message));
      }, { once: true });
      es.addEventListener('endpoint', (e) => {
        clearTimeout(timer);
        let endpoint: URL;
        try {
          endpoint = new URL(e.data, sseUrl);
        } catch {
          return fail(new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', 'the endpoint event is not a URL'));
        }
        // digest §4.2 [SDK v2 client]: the POST endpoint must share the SSE URL's origin.
        if (endpoint.origin !== sseUrl.origin) {
          return fail(new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `the endpoint event names another origin (${endpoint.origin})`));
        }
        log.debug('upstream.sse.endpoint', { endpoint: safeUrl(endpoint.href) });
        resolve(new SsePipe(es, endpoint, opts, log));
      }, { once: true });
    });
  }

  /** One POST per message; the server answers 202 and replies on the stream. */
  async send(msg: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    if (this.closeReason !== undefined) throw new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', `http+sse pipe closed: ${this.closeReason}`);
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers = new Headers(this.opts.headers);
    headers.set('content-type', 'application/json');
    const res = await doFetch(this.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify(msg),
      signal: AbortSignal.any([this.ac.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
    });
    const text = await res.text().catch(() => '');
    if (res.ok) return;
    if (res.status === 404) this.finish('http+sse session not found (POST answered 404)');
    throw new TransportError(res.status, text.slice(0, 500), `http+sse POST answered HTTP ${res.status}`);
  }

  onMessage(listener: (msg: unknown) => void): void {
    this.listener = listener;
    for (const m of this.early.splice(0)) listener(m);
  }

  onClose(listener: (reason: string) => void): void {
    const reason = this.closeReason;
    if (reason !== undefined) queueMicrotask(() => listener(reason));
    else this.closeListeners.push(listener);
  }

  async close(): Promise<void> {
    this.finish('closed');
  }

  private receive(data: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      this.log.warn('upstream.sse.not_json', { length: data.length });
      return;
    }
    if (this.listener) this.listener(msg);
    else this.early.push(msg);
  }

  private finish(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.es.close();
    this.ac.abort();
    this.log.debug('upstream.sse.closed', { reason });
    for (const l of this.closeListeners.splice(0)) l(reason);
  }
}
