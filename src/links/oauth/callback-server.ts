import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BridgeError } from '../../errors.js';
import { errorCodeReason, withReason } from './oauth-observer.js';

/** What the authorization server sent back through the browser (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export interface CallbackResult {
  code: string;
  /** Exactly as received (form-urldecoded, never normalised): RFC 9207 §2.4 compares it byte for byte. */
  iss?: string;
}

const CALLBACK_PATH = '/oauth/callback';
/** Ports tried after the preferred one when it is busy. */
const MORE_PORTS = 20;
const PAGE = (text: string) => `<!doctype html><meta charset="utf-8"><title>mcp-bridge</title><p>${text}</p>`;

/**
 * A callback port that stays the same for an upstream across starts, so a
 * cached registration's redirect URI keeps matching (10000–29999, below
 * Linux's ephemeral range).
 */
export function derivedCallbackPort(upstream: string): number {
  return 10_000 + (createHash('sha256').update(upstream).digest().readUInt32BE(0) % 20_000);
}

/** The loopback redirect target of one authorization flow (RFC 8252 §7.3). */
export class CallbackServer {
  private waiting: { state: string; resolve(r: CallbackResult): void; reject(e: Error): void } | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {
    server.on('request', (req, res) => this.onRequest(req, res));
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.port}${CALLBACK_PATH}`;
  }

  /**
   * Listens on 127.0.0.1 at `preferred`; with `walk`, a busy port gives way to
   * the next free one (a derived port: the registration is then made afresh).
   * An explicit `--oauth-callback-port` names a redirect URI the authorization
   * server already knows, so it is used as given or not at all.
   */
  static async listen(preferred: number, walk = true): Promise<CallbackServer> {
    let last: unknown;
    for (let port = preferred; port <= Math.min(65_535, walk ? preferred + MORE_PORTS : preferred); port++) {
      const server = http.createServer();
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, '127.0.0.1', () => resolve());
        });
        return new CallbackServer(server, (server.address() as AddressInfo).port);
      } catch (err) {
        last = err;
        if ((err as { code?: string }).code !== 'EADDRINUSE') break;
      }
    }
    throw new BridgeError('BRIDGE_ERR_AUTH', `cannot listen for the OAuth callback on 127.0.0.1:${preferred}: ${(last as Error)?.message}; pick another with --oauth-callback-port`, { cause: last });
  }

  /** Resolves with the code once the browser arrives with `state`; rejects on an error answer or after `timeoutMs`. */
  wait(state: string, timeoutMs: number): Promise<CallbackResult> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(withReason(new BridgeError('BRIDGE_ERR_AUTH', `no OAuth callback within ${timeoutMs} ms: open the printed URL in a browser, or raise --oauth-timeout`), 'callback_timeout'));
      }, timeoutMs);
      const done = <T>(fn: (v: T) => void) => (v: T) => {
        clearTimeout(timer);
        this.waiting = undefined;
        fn(v);
      };
      this.waiting = { state, resolve: done(resolve), reject: done(reject) };
    });
  }

  /** Stops listening; a flow still waiting for the browser ends at once with "stopped". */
  close(): Promise<void> {
    this.waiting?.reject(new BridgeError('BRIDGE_ERR_AUTH', 'the OAuth flow was stopped before the browser came back (the server was removed or the bridge is stopping)'));
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const reply = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(PAGE(text));
    };
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return reply(404, 'Not found.');
    const w = this.waiting;
    const q = url.searchParams;
    // A request without this flow's state is not its answer (RFC 6749 §10.12): refused, the wait goes on.
    if (!w || q.get('state') !== w.state) return reply(400, 'This authorization response does not belong to a flow in progress.');
    const error = q.get('error');
    if (error !== null) {
      reply(400, 'Authorization failed; see the bridge for details.');
      const description = q.get('error_description');
      const err = new BridgeError('BRIDGE_ERR_AUTH', `the authorization server answered ${error}${description ? ` (${description})` : ''}: run mcp-bridge login again, or check the client registration and scopes`);
      return w.reject(withReason(err, errorCodeReason(error)));
    }
    const code = q.get('code');
    if (!code) return reply(400, 'The authorization response carries no code.');
    reply(200, 'mcp-bridge is authorized. You can close this window.');
    const iss = q.get('iss');
    w.resolve(iss === null ? { code } : { code, iss });
  }
}
