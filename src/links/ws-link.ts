import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import WebSocket from 'ws';
import { BridgeError, TransportError } from '../errors.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import type { Logger } from '../log.js';
import { safeUrl, type HttpLinkOptions } from './legacy-http-link.js';
import type { MessagePipe } from './message-pipe.js';
import { PipeInbox } from './pipe-inbox.js';
import { PipeLink } from './pipe-link.js';
import { mergeHeaders } from '../wire/merge-headers.js';

/** The subprotocol SDK v1's WebSocketClientTransport asks for. */
const SUBPROTOCOL = 'mcp';
const HANDSHAKE_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;

/**
 * A `LegacyLink` to an initialize-era WebSocket server: one connection per
 * session, one JSON-RPC message per text frame, nothing linking a server
 * request to the call that caused it (so sessions do not correlate).
 */
export class WsLink extends PipeLink {
  readonly kind = 'ws' as const;

  /** `opts.url` is a `ws://` or `wss://` URL; `opts.fetch` is not used. */
  constructor(private readonly opts: HttpLinkOptions) {
    super(opts.logger.child({ link: 'ws', upstream: safeUrl(opts.url) }), opts.callTimeoutMs);
  }

  protected connect(headers?: Readonly<Record<string, string>>): Promise<MessagePipe> {
    return WsPipe.connect(headers ? { ...this.opts, headers: mergeHeaders(this.opts.headers, headers) } : this.opts, this.log);
  }
}

/** One WebSocket connection as a MessagePipe. */
class WsPipe implements MessagePipe {
  private readonly inbox: PipeInbox;

  private constructor(
    private readonly ws: WebSocket,
    log: Logger,
  ) {
    this.inbox = new PipeInbox(log, 'ws');
    ws.on('message', (data, isBinary) => this.inbox.receive(isBinary ? undefined : String(data)));
    ws.on('error', (err) => log.debug('upstream.ws.error', { error: err }));
    ws.on('close', (code, reason) => this.inbox.finish(`websocket closed (code ${code}${reason.length ? `: ${String(reason)}` : ''})`));
  }

  /** Opens the connection; an upgrade refused with an OAuth challenge runs the flow and is tried again (opts.auth). */
  static async connect(opts: HttpLinkOptions, log: Logger): Promise<WsPipe> {
    const auth = opts.auth;
    if (!auth) return WsPipe.open(opts, opts.headers, log);
    const tries = { unauthorized: 0, stepUps: 0 };
    for (;;) {
      const sent = await auth.header();
      try {
        return await WsPipe.open(opts, sent === undefined ? opts.headers : { ...opts.headers, authorization: sent }, log);
      } catch (err) {
        if (!(err instanceof TransportError) || !(await auth.challenged({ status: err.status, wwwAuthenticate: err.body || undefined }, sent, tries))) throw err;
      }
    }
  }

  /** Opens the connection with subprotocol `mcp`; rejects with the HTTP status (and `WWW-Authenticate` as body) when the upgrade is refused. */
  private static open(opts: HttpLinkOptions, headers: Record<string, string>, log: Logger): Promise<WsPipe> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(opts.url, SUBPROTOCOL, { headers, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(err);
      };
      ws.once('unexpected-response', (req, res) => {
        req.destroy();
        const challenge = res.headers['www-authenticate'];
        fail(new TransportError(res.statusCode ?? 0, typeof challenge === 'string' ? challenge : '', `WebSocket upgrade to ${safeUrl(opts.url)} answered HTTP ${res.statusCode}`));
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
    if (this.inbox.closeReason !== undefined || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new BridgeError('BRIDGE_ERR_UPSTREAM_CLOSED', `WebSocket closed: ${this.inbox.closeReason ?? 'not open'}`));
    }
    return new Promise((resolve, reject) => this.ws.send(stringifyJsonRpc(msg), (err) => (err ? reject(err) : resolve())));
  }

  onMessage(listener: (msg: unknown) => void): void {
    this.inbox.onMessage(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.inbox.onClose(listener);
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
}
