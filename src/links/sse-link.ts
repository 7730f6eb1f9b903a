import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { EventSource } from 'eventsource';
import { BridgeError, TransportError } from '../errors.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import type { Logger } from '../log.js';
import { safeUrl, type HttpLinkOptions } from './legacy-http-link.js';
import type { MessagePipe } from './message-pipe.js';
import { PipeInbox } from './pipe-inbox.js';
import { PipeLink } from './pipe-link.js';
import { mergeHeaders } from '../wire/merge-headers.js';

/** How long the server has to send its `endpoint` event after the GET. */
const ENDPOINT_WAIT_MS = 10_000;
const POST_TIMEOUT_MS = 30_000;

/**
 * A `LegacyLink` to a 2024-11-05 HTTP+SSE server (digest §4.2): one GET
 * stream per session, whose `endpoint` event names the POST URL for every
 * client message; every server message arrives as a `message` event.
 */
export class SseLink extends PipeLink {
  readonly kind = 'http+sse' as const;

  /** `opts.url` is the SSE URL (`…/sse`). */
  constructor(private readonly opts: HttpLinkOptions) {
    super(opts.logger.child({ link: 'http+sse', upstream: safeUrl(opts.url) }), opts.callTimeoutMs);
  }

  protected connect(headers?: Readonly<Record<string, string>>): Promise<MessagePipe> {
    return SsePipe.connect(headers ? { ...this.opts, headers: mergeHeaders(this.opts.headers, headers) } : this.opts, this.log);
  }
}

/** One http+sse connection as a MessagePipe: the stream in, POSTs to the endpoint out. */
class SsePipe implements MessagePipe {
  private readonly inbox: PipeInbox;
  private readonly ac = new AbortController();

  private constructor(
    private readonly es: EventSource,
    private readonly endpoint: URL,
    private readonly opts: HttpLinkOptions,
    private readonly log: Logger,
  ) {
    this.inbox = new PipeInbox(log, 'sse');
    es.addEventListener('message', (e) => this.inbox.receive(e.data));
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
    if (this.inbox.closeReason !== undefined) throw new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', `http+sse pipe closed: ${this.inbox.closeReason}`);
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers = new Headers(this.opts.headers);
    headers.set('content-type', 'application/json');
    const res = await doFetch(this.endpoint, {
      method: 'POST',
      headers,
      body: stringifyJsonRpc(msg),
      signal: AbortSignal.any([this.ac.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
    });
    const text = await res.text().catch(() => '');
    if (res.ok) return;
    if (res.status === 404) this.finish('http+sse session not found (POST answered 404)');
    throw new TransportError(res.status, text.slice(0, 500), `http+sse POST answered HTTP ${res.status}`);
  }

  onMessage(listener: (msg: unknown) => void): void {
    this.inbox.onMessage(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.inbox.onClose(listener);
  }

  async close(): Promise<void> {
    this.finish('closed');
  }

  private finish(reason: string): void {
    if (!this.inbox.finish(reason)) return;
    this.es.close();
    this.ac.abort();
  }
}
