import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';
import { LegacySessionDriver } from './legacy-session-driver.js';
import { isOriginAllowed } from './origin.js';
import type { LegacyFaceOptions } from './streamable-http-sessions.js';

/** The subprotocol the SDK WebSocket transports ask for. */
const SUBPROTOCOL = 'mcp';
/** How long close() waits for clients to finish the closing handshake before cutting them off. */
const CLOSE_GRACE_MS = 1_000;

/**
 * Initialize-era clients over WebSocket: one session per socket, one JSON-RPC
 * message (or batch) per text frame. The socket is the session: either ending
 * ends the other.
 */
export class WsSessions {
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  private readonly sockets = new Map<WebSocket, LegacySessionDriver>();
  private detach: (() => void) | undefined;
  private closing = false;

  constructor(private readonly opts: LegacyFaceOptions) {}

  get size(): number {
    return this.sockets.size;
  }

  /** Serves WebSocket upgrades to `path` on `server`; Origin is checked before the handshake. */
  attach(server: http.Server, path = '/ws'): void {
    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) {
        // Another upgrade listener may own this path; with none, nobody else would answer.
        if (server.listenerCount('upgrade') === 1) refuseUpgrade(socket, 404, 'Not Found');
        return;
      }
      if (!isOriginAllowed(req.headers.origin, this.opts.allowOrigins)) return refuseUpgrade(socket, 403, 'Forbidden');
      if (this.closing) return refuseUpgrade(socket, 503, 'Service Unavailable');
      this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws));
    };
    server.on('upgrade', onUpgrade);
    this.detach = () => server.off('upgrade', onUpgrade);
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

  private serve(ws: WebSocket): void {
    const sessionId = randomBytes(32).toString('hex');
    const log = this.opts.logger.child({ sessionId, transport: 'ws' });
    const driver = new LegacySessionDriver({
      handler: this.opts.handler,
      transport: 'ws',
      sessionId,
      logger: this.opts.logger,
      inputTimeoutMs: this.opts.inputTimeoutMs,
      send: (m) => sendFrame(ws, m),
    });
    this.sockets.set(ws, driver);
    const heartbeat = this.opts.heartbeatMs > 0 ? setInterval(() => ws.ping(), this.opts.heartbeatMs) : undefined;
    heartbeat?.unref();

    ws.on('message', (data) => {
      let msg: unknown;
      try {
        msg = JSON.parse(frameText(data));
      } catch {
        sendFrame(ws, errorResponse(null, { code: RpcCode.ParseError, message: 'Parse error' }));
        return;
      }
      // Not awaited: a call waiting for elicitation must not block the frame that answers it.
      driver.receive(msg).then(
        (answer) => answer !== undefined && sendFrame(ws, answer),
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

function sendFrame(ws: WebSocket, msg: JSONRPCMessage | JSONRPCMessage[]): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  ws.send(JSON.stringify(msg));
  return true;
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
