import type { LegacyLink, LegacyUpstreamSession, UpstreamAuth, UpstreamInit } from '../contracts/upstream.js';
import { DEFAULT_OPTIONS } from '../daemon/options.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import { HttpSession } from './http-session.js';
import { HttpSessionClient } from './http-session-client.js';
import { mergeHeaders } from '../wire/merge-headers.js';

/** How every HTTP-based link (Streamable HTTP, http+sse, WebSocket) is configured. */
export interface HttpLinkOptions {
  /** The MCP endpoint; for http+sse the `/sse` URL, for WebSocket a `ws://` or `wss://` URL. */
  url: string;
  /** Added to every request (credentials among them); never logged. */
  headers: Record<string, string>;
  logger: Logger;
  /** Default per-call deadline; `CallHandlers.timeoutMs` overrides it. */
  callTimeoutMs?: number;
  /**
   * Sends through this fetch. The Streamable HTTP link goes without one over
   * node:http (http-session-client.ts), then bounding SSE lines by `maxLineBytes`.
   */
  fetch?: typeof fetch;
  /** `--max-line` for upstream SSE lines read without a fetch. */
  maxLineBytes?: number;
  /** OAuth toward the upstream (src/links/oauth/); the http+sse link gets it through `fetch` instead. */
  auth?: UpstreamAuth;
}

/**
 * A `LegacyLink` to a 2025 Streamable HTTP server (digest §4.3): each
 * `openSession` runs its own initialize and holds its own `Mcp-Session-Id`.
 */
export class LegacyHttpLink implements LegacyLink {
  readonly kind = 'streamable-http' as const;
  private readonly opts: HttpLinkOptions;
  private readonly log: Logger;
  private readonly sessions = new Set<HttpSession>();
  private closing = false;

  constructor(opts: HttpLinkOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ link: this.kind, upstream: safeUrl(opts.url) });
  }

  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    if (this.closing) throw new BridgeError('BRIDGE_ERR_CLOSED', 'the Streamable HTTP link is closed');
    const client = new HttpSessionClient({ url: this.opts.url, headers: init.headers ? mergeHeaders(this.opts.headers, init.headers) : this.opts.headers, fetch: this.opts.fetch, maxLineBytes: this.opts.maxLineBytes, auth: this.opts.auth });
    const session = await HttpSession.open(client, init, {
      logger: this.log,
      callTimeoutMs: this.opts.callTimeoutMs ?? DEFAULT_OPTIONS.callTimeoutMs,
    });
    if (this.closing) {
      await session.close();
      throw new BridgeError('BRIDGE_ERR_CLOSED', 'the Streamable HTTP link closed while the session opened');
    }
    this.sessions.add(session);
    session.onClose((reason) => {
      this.sessions.delete(session);
      this.log.debug('upstream.session.closed', { session: session.id, reason });
    });
    return session;
  }

  /** Closes (DELETEs) every session this link opened. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions].map((s) => s.close()));
    this.sessions.clear();
  }
}

/** The URL without credentials or query, for log lines. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '[invalid url]';
  }
}
