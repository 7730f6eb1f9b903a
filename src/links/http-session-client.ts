import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import type { UpstreamAuth } from '../contracts/upstream.js';
import { nodeHttpReply } from './node-http-reply.js';
import { UpstreamTarget } from './upstream-http.js';
import { LazyAbort } from './lazy-abort.js';
import { authorizedFetch } from './oauth/authorized-fetch.js';
import { fetchReply, type UpstreamReply } from './upstream-reply.js';

/**
 * The HTTP exchanges of one Streamable HTTP session (digest §4.3): every POST,
 * GET and DELETE carries the configured headers, the session id once the
 * server assigned one, and `MCP-Protocol-Version` once negotiated ≥ 2025-06-18.
 */
export interface HttpSessionClientOptions {
  url: string;
  /** Added to every request (credentials among them); never logged. */
  headers: Record<string, string>;
  /**
   * Sends through this fetch instead (it then bounds SSE lines itself, as
   * `lineLimitedFetch` does). Without one, requests go over node:http and
   * are read directly (node-http-reply.ts), bounded by `maxLineBytes`.
   */
  fetch?: typeof fetch;
  /** `--max-line` for SSE answers read over node:http. */
  maxLineBytes?: number;
  /** OAuth toward the upstream (src/links/oauth/): the header on every request, the flow on a 401. */
  auth?: UpstreamAuth;
}

const JSON_TYPE = 'application/json';
const SSE_TYPE = 'text/event-stream';

/** A real AbortSignal, or a session call's cancel (lazy-abort.ts), which builds one only for a configured fetch. */
type Signal = AbortSignal | LazyAbort;

type Send = (method: string, headers: Record<string, string>, body: string | undefined, signal: Signal | undefined) => Promise<UpstreamReply>;

/** Sends the requests of one session to one MCP endpoint. */
export class HttpSessionClient {
  readonly url: string;
  /** `Mcp-Session-Id` from the InitializeResult response, when the server assigned one. */
  sessionId: string | undefined;
  /** Sent as `MCP-Protocol-Version` when set (digest §4.3: required from 2025-06-18). */
  protocolVersion: string | undefined;
  private readonly extra: Record<string, string>;
  private readonly send: Send;

  constructor(opts: HttpSessionClientOptions) {
    this.url = opts.url;
    // Lower-case once: ours replace configured headers of the same name by key.
    this.extra = Object.fromEntries(Object.entries(opts.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const auth = opts.auth;
    const doFetch = opts.fetch && auth ? authorizedFetch(auth, opts.fetch) : opts.fetch;
    const max = opts.maxLineBytes;
    if (doFetch) {
      this.send = async (method, headers, body, signal) => fetchReply(await doFetch(this.url, { method, headers, body, signal: signal instanceof LazyAbort ? signal.signal : signal }));
    } else {
      const target = targetOf(this.url);
      this.send = (method, headers, body, signal) => nodeHttpReply(target, { method, headers, body, signal, auth }, max);
    }
  }

  /** POSTs one JSON-RPC message (or batch); a request's answer may be JSON or SSE. */
  post(body: unknown, signal?: Signal): Promise<UpstreamReply> {
    return this.send('POST', this.headers({ accept: `${JSON_TYPE}, ${SSE_TYPE}`, 'content-type': JSON_TYPE }), stringifyJsonRpc(body), signal);
  }

  /** Opens the standalone stream, or resumes one with `Last-Event-ID` (digest §4.3 Resumability). */
  get(lastEventId: string | undefined, signal?: Signal): Promise<UpstreamReply> {
    const own: Record<string, string> = { accept: SSE_TYPE };
    if (lastEventId !== undefined) own['last-event-id'] = lastEventId;
    return this.send('GET', this.headers(own), undefined, signal);
  }

  /** Ends the session on the server (a 405 answer is allowed by the spec). */
  delete(signal?: AbortSignal): Promise<UpstreamReply> {
    return this.send('DELETE', this.headers({}), undefined, signal);
  }

  /** Ours win over configured headers of the same name: they carry the protocol. */
  private headers(own: Record<string, string>): Record<string, string> {
    // Object.assign, not a spread: a spread copy given more keys outlives the young GC (upstream-http.ts, options).
    const h: Record<string, string> = Object.assign({}, this.extra, own);
    if (this.sessionId !== undefined) h['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) h['mcp-protocol-version'] = this.protocolVersion;
    return h;
  }
}

/** The endpoint parsed once; a URL that is not http(s) is refused on each send, as it was before (a rejected call). */
function targetOf(url: string): UpstreamTarget | string {
  try {
    return new UpstreamTarget(url);
  } catch {
    return url;
  }
}
