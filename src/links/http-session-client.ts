/**
 * The HTTP exchanges of one Streamable HTTP session (digest §4.3): every POST,
 * GET and DELETE carries the configured headers, the session id once the
 * server assigned one, and `MCP-Protocol-Version` once negotiated ≥ 2025-06-18.
 */
export interface HttpSessionClientOptions {
  url: string;
  /** Added to every request (credentials among them); never logged. */
  headers: Record<string, string>;
  fetch?: typeof fetch;
}

const JSON_TYPE = 'application/json';
const SSE_TYPE = 'text/event-stream';

/** Sends the requests of one session to one MCP endpoint. */
export class HttpSessionClient {
  readonly url: string;
  /** `Mcp-Session-Id` from the InitializeResult response, when the server assigned one. */
  sessionId: string | undefined;
  /** Sent as `MCP-Protocol-Version` when set (digest §4.3: required from 2025-06-18). */
  protocolVersion: string | undefined;
  private readonly extra: Record<string, string>;
  private readonly doFetch: typeof fetch;

  constructor(opts: HttpSessionClientOptions) {
    this.url = opts.url;
    this.extra = opts.headers;
    this.doFetch = opts.fetch ?? globalThis.fetch;
  }

  /** POSTs one JSON-RPC message (or batch); a request's answer may be JSON or SSE. */
  post(body: unknown, signal?: AbortSignal): Promise<Response> {
    const headers = this.headers({ accept: `${JSON_TYPE}, ${SSE_TYPE}`, 'content-type': JSON_TYPE });
    return this.doFetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  }

  /** Opens the standalone stream, or resumes one with `Last-Event-ID` (digest §4.3 Resumability). */
  get(lastEventId: string | undefined, signal?: AbortSignal): Promise<Response> {
    const extra: Record<string, string> = { accept: SSE_TYPE };
    if (lastEventId !== undefined) extra['last-event-id'] = lastEventId;
    return this.doFetch(this.url, { method: 'GET', headers: this.headers(extra), signal });
  }

  /** Ends the session on the server (a 405 answer is allowed by the spec). */
  delete(signal?: AbortSignal): Promise<Response> {
    return this.doFetch(this.url, { method: 'DELETE', headers: this.headers({}), signal });
  }

  /** Ours win over configured headers of the same name: they carry the protocol. */
  private headers(own: Record<string, string>): Headers {
    const h = new Headers(this.extra);
    for (const [k, v] of Object.entries(own)) h.set(k, v);
    if (this.sessionId !== undefined) h.set('mcp-session-id', this.sessionId);
    if (this.protocolVersion !== undefined) h.set('mcp-protocol-version', this.protocolVersion);
    return h;
  }
}
