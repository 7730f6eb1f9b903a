import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import WebSocket from 'ws';
import type { LegacyLink, LegacyUpstreamSession, UpstreamInit } from '../contracts/upstream.js';
import { DEFAULT_OPTIONS } from '../daemon/options.js';
import { BridgeError, TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { safeUrl, type HttpLinkOptions } from './legacy-http-link.js';
import type { MessagePipe } from './message-pipe.js';
import { openPipeSession } from './pipe-session.js';

/** The subprotocol SDK v1's WebSocketClientTransport asks for. */
const SUBPROTOCOL = 'mcp';
const HANDSHAKE_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;

/**
 * A `LegacyLink` to an initialize-era WebSocket server: one connection per
 * session, one JSON-RPC message per text frame, nothing linking a server
 * request to the call that caused it (so sessions do not correlate).
 */
export class WsLink implements LegacyLink {
  readonly kind = 'ws' as const;
  private readonly opts: HttpLinkOptions;
  private readonly log: Logger;
  private readonly sessions = new Set<LegacyUpstreamSession>();
  private closing = false;

  /** `opts.url` is a `ws://` or `wss://` URL; `opts.fetch` is not used. */
  constructor(opts: HttpLinkOptions) {
    this.opts = opts;
    this.log = opts.logger.child({ link: this.kind, upstream: safeUrl(opts.url) });
  }

  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    if (this.closing) throw new BridgeError('BRIDGE_ERR_CLOSED', 'the WebSocket link is closed');
    const pipe = await WsPipe.connect(this.opts, this.log);
    const session = await openPipeSession(pipe, init, {
      logger: this.log,
      callTimeoutMs: this.opts.callTimeoutMs ?? DEFAULT_OPTIONS.callTimeoutMs,
      kind: 'ws',
    });
    if (this.closing) {
      await session.close();
      throw new BridgeError('BRIDGE_ERR_CLOSED', 'the WebSocket link closed while the session opened');
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

/** One WebSocket connection as a MessagePipe. */
class WsPipe implements MessagePipe {
  private listener: ((msg: unknown) => void) | undefined;
  private readonly early: unknown[] = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private closeReason: string | undefined;

  private constructor(
    private readonly ws: WebSocket,
    private readonly log: Logger,
  ) {
    ws.on('message', (data, isBinary) => this.receive(isBinary ? undefined : String(data)));
    ws.on('error', (err) => log.debug('upstream.ws.error', { error: err }));
    ws.on('close', (code, reason) => this.finish(`websocket closed (code ${code}${reason.length ? `: ${String(reason)}` : ''})`));
  }

  /** Opens the connection with subprotocol `mcp`; rejects with the HTTP status when the upgrade is refused. */
  static connect(opts: HttpLinkOptions, log: Logger): Promise<WsPipe> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(opts.url, SUBPROTOCOL, { headers: opts.headers, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(err);
      };
      ws.once('unexpected-response', (req, res) => {
        req.destroy();
        fail(new TransportError(res.statusCode ?? 0, '', `WebSocket upgrade to ${safeUrl(opts.url)} answered HTTP ${res.statusCode}`));
      });
      ws.once('error', (err) => fail(new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `cannot open ${safeUrl(opts.url)}: ${err.message}`, { cause: err })));
      ws.once('open', () => {
        if (settled) return;
        settled = true;
        resolve(new WsPipe(ws, log));
      });
    });
  }

  send(msg: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    if (this.closeReason !== undefined || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', `WebSocket closed: ${this.closeReason ?? 'not open'}`));
    }
    return new Promise((resolve, reject) => this.ws.send(JSON.stringify(msg), (err) => (err ? reject(err) : resolve())));
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

  /** A normal close (1000); terminates the socket if the server does not answer the close frame. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.close(1000);
    });
  }

  private receive(text: string | undefined): void {
    let msg: unknown;
    try {
      if (text === undefined) throw new Error('binary frame');
      msg = JSON.parse(text);
    } catch {
      this.log.warn('upstream.ws.not_json', { length: text?.length });
      return;
    }
    if (this.listener) this.listener(msg);
    else this.early.push(msg);
  }

  private finish(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.log.debug('upstream.ws.closed', { reason });
    for (const l of this.closeListeners.splice(0)) l(reason);
  }
}
