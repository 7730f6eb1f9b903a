import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse, type RpcErrorBody } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { parseInboundJson } from './inbound-json.js';

import { LegacySessionDriver } from './legacy-session-driver.js';
import { isOriginAllowed } from './origin.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from './sse-stream.js';
import type { LegacyFaceOptions } from './streamable-http-sessions.js';
import type { Refusal } from './request-gate.js';
import { principalOf, type Principal } from '../identity/principal.js';

/** The subprotocol the SDK WebSocket transports ask for. */
const SUBPROTOCOL = 'mcp';
/** How long close() waits for clients to finish the closing handshake before cutting them off. */
const CLOSE_GRACE_MS = 1_000;
/** ws's own default is 100 MiB; the face's is the HTTP body limit's default. */
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Initialize-era clients over WebSocket: one session per socket, one JSON-RPC
 * message (or batch) per text frame. The socket is the session: either ending
 * ends the other.
 */
export class WsSessions {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Map<WebSocket, LegacySessionDriver>();
  private detach: (() => void) | undefined;
  private closing = false;

  constructor(private readonly opts: LegacyFaceOptions) {
    // A larger message closes the socket with 1009 (RFC 6455 §7.4.1).
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    });
  }

  get size(): number {
    return this.sockets.size;
  }

  /** Serves WebSocket upgrades to `path` on `server`; Origin, the gate (Host, token) and the session budget are checked before the handshake. */
  attach(server: http.Server, path = '/ws'): void {
    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) {
        // Another upgrade listener may own this path; with none, nobody else would answer.
        if (server.listenerCount('upgrade') === 1) refuseUpgrade(socket, 404, 'Not Found');
        return;
      }
      this.upgrade(req, socket, head);
    };
    server.on('upgrade', onUpgrade);
    this.detach = () => server.off('upgrade', onUpgrade);
  }

  /** One upgrade request already routed here (attach, or a router that owns the server's upgrades). */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    // The gate checks Origin itself, after Host, as the HTTP routes do.
    if (!this.opts.gate && !isOriginAllowed(req.headers.origin, this.opts.allowOrigins)) return refuseUpgrade(socket, 403, 'Forbidden');
    const refused = this.opts.gate?.(req);
    if (refused instanceof Promise) {
      refused.then((r) => this.admitted(r, req, socket, head), () => refuseUpgrade(socket, 500, 'Internal Server Error'));
      return;
    }
    this.admitted(refused, req, socket, head);
  }

  private admitted(refused: Refusal | undefined, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    if (refused) {
      this.opts.logger.warn('legacy.ws.refused', { reason: refused.reason, status: refused.status });
      return refuseUpgrade(socket, refused.status, STATUS_TEXT[refused.status] ?? 'Forbidden', refused);
    }
    if (this.closing) return refuseUpgrade(socket, 503, 'Service Unavailable');
    const principal = principalOf(req);
    const release = this.opts.sessions ? this.opts.sessions.tryAcquire(principal?.id) : () => {};
    if (!release) return refuseUpgrade(socket, 503, 'Service Unavailable', { error: { code: RpcCode.ServerError, message: this.opts.sessions!.refusal(principal?.id) }, headers: { 'retry-after': '1' } });
    // The raw socket closes however the upgrade ends (refused mid-handshake, or the session's end).
    socket.once('close', release);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, principal));
  }

  /** Closes every socket and session and stops accepting upgrades. */
  async close(): Promise<void> {
    this.closing = true;
    this.detach?.();
    const sockets = [...this.sockets.keys()];
    const gone = sockets.map((ws) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once('close', () => resolve()))));
    for (const ws of sockets) ws.close(1001, 'server shutting down');
    await Promise.all([...this.sockets.values()].map((d) => d.close('shutting down')));
    const grace = setTimeout(() => sockets.forEach((ws) => ws.terminate()), CLOSE_GRACE_MS);
    await Promise.all(gone);
    clearTimeout(grace);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private serve(ws: WebSocket, principal: Principal | undefined): void {
    const sessionId = randomBytes(32).toString('hex');
    const log = this.opts.logger.child({ sessionId, transport: 'ws' });
    const driver = new LegacySessionDriver({
      handler: this.opts.handler,
      transport: 'ws',
      sessionId,
      principal,
      logger: this.opts.logger,
      inputTimeoutMs: this.opts.inputTimeoutMs,
      send: (m) => sendFrame(ws, m, log),
    });
    this.sockets.set(ws, driver);
    const heartbeat = this.opts.heartbeatMs > 0 ? setInterval(() => ws.ping(), this.opts.heartbeatMs) : undefined;
    heartbeat?.unref();

    ws.on('message', (data) => {
      const parsed = parseInboundJson(frameText(data), this.opts.maxJsonDepth, 'Parse error');
      if (!parsed.ok) {
        sendFrame(ws, errorResponse(null, parsed.error), log);
        return;
      }
      const msg = parsed.body;
      // Not awaited: a call waiting for elicitation must not block the frame that answers it.
      driver.receive(msg).then(
        (answer) => answer !== undefined && sendFrame(ws, answer, log),
        (err) => log.error('legacy.ws.receive_failed', { err }),
      );
    });
    ws.on('error', (err) => log.debug('legacy.ws.error', { err }));
    ws.on('close', () => {
      if (heartbeat) clearInterval(heartbeat);
      this.sockets.delete(ws);
      void driver.close('socket closed');
    });
    driver.onClose(() => {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'session closed');
    });
  }
}

function sendFrame(ws: WebSocket, msg: JSONRPCMessage | JSONRPCMessage[], log: Logger): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  // The bound SSE streams have (sse-stream.ts): a client that stopped reading is cut off, not buffered for.
  if (ws.bufferedAmount > DEFAULT_MAX_BUFFERED_BYTES) {
    log.warn('ws.slow_client_closed', { bufferedBytes: ws.bufferedAmount, maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES });
    ws.terminate();
    return false;
  }
  ws.send(stringifyJsonRpc(msg));
  return true;
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 421: 'Misdirected Request' };

/** Ends an upgrade with a plain HTTP refusal; with `detail`, a JSON-RPC error body (id null) and its headers. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string, detail?: { error: RpcErrorBody; headers?: Record<string, string> }): void {
  const body = detail ? JSON.stringify(errorResponse(null, detail.error)) : '';
  const extra = Object.entries(detail?.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const type = detail ? 'Content-Type: application/json\r\n' : '';
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n${type}${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
