import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import { messageShapeProblem } from '../jsonrpc/messages.js';
import { LegacySessionDriver } from './legacy-session-driver.js';
import { legacyHttpError } from './legacy-http-error.js';
import { SseStream } from './sse-stream.js';
import type { LegacyFaceOptions } from './streamable-http-sessions.js';
import { principalOf } from '../identity/principal.js';
import { ownedBy } from '../identity/owned-by.js';

interface SseSession {
  id: string;
  driver: LegacySessionDriver;
  stream: SseStream;
}

/**
 * The 2024-11-05 HTTP+SSE server side (digest §4.2): GET opens the stream and
 * names the POST endpoint; every server message, responses included, travels
 * on that one stream; a POST is acknowledged with 202.
 */
export class SseSessions {
  private readonly sessions = new Map<string, SseSession>();
  private closing = false;

  /** `messagesPath` is the POST endpoint named in the `endpoint` event. */
  constructor(private readonly opts: LegacyFaceOptions, private readonly messagesPath = '/messages') {}

  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /**
   * GET /sse: opens a session whose first event is `endpoint` (SDK v1 convention: `?sessionId=`);
   * `messagesPath` overrides the constructor's for a face mounted under a prefix (`/servers/<name>`).
   */
  handleGet(req: IncomingMessage, res: ServerResponse, messagesPath = this.messagesPath): void {
    if (this.closing) return legacyHttpError(res, 503, RpcCode.ServerError, 'Service Unavailable: shutting down');
    const principal = principalOf(req);
    const release = this.opts.sessions ? this.opts.sessions.tryAcquire(principal?.id) : () => {};
    if (!release) return legacyHttpError(res, 503, RpcCode.ServerError, this.opts.sessions!.refusal(principal?.id), { 'retry-after': '1' });
    const id = this.opts.mintSessionId?.() ?? randomBytes(32).toString('hex');
    const stream = new SseStream(res, { heartbeatMs: this.opts.heartbeatMs, logger: this.opts.logger });
    const driver = new LegacySessionDriver({
      handler: this.opts.handler,
      transport: 'http+sse',
      sessionId: id,
      principal,
      logger: this.opts.logger,
      inputTimeoutMs: this.opts.inputTimeoutMs,
      send: (m) => stream.send(m),
    });
    const s: SseSession = { id, driver, stream };
    this.sessions.set(id, s);
    // The stream is the session: when either ends, so does the other.
    stream.onClose(() => void driver.close('client closed the SSE stream'));
    driver.onClose(() => {
      release();
      this.sessions.delete(id);
      stream.end();
    });
    stream.event('endpoint', `${messagesPath}?sessionId=${id}`);
  }

  /** POST /messages?sessionId=: 202 at once, then the message goes to the session; answers go on its stream. */
  async handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sid = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sessionId');
    if (!sid) return legacyHttpError(res, 400, RpcCode.ServerError, 'Bad Request: sessionId query parameter is required');
    const s = this.sessions.get(sid);
    // Another principal's session does not exist for this one (DESIGN "Identity").
    if (!s || !ownedBy(s.driver.principal, req, this.opts.logger, sid)) return legacyHttpError(res, 404, RpcCode.SessionNotFound, 'Session not found');
    const problem = Array.isArray(body) ? (body.length === 0 ? 'empty batch' : undefined) : messageShapeProblem(body);
    if (problem) return legacyHttpError(res, 400, RpcCode.InvalidRequest, `Invalid Request: ${problem}`);
    res.writeHead(202, { 'content-type': 'text/plain; charset=utf-8' }).end('Accepted');
    const answer = await s.driver.receive(body);
    if (answer !== undefined && !s.stream.send(answer)) {
      this.opts.logger.debug('legacy.sse.answer_dropped', { sessionId: sid });
    }
  }

  /** Ends every stream and session. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions.values()].map((s) => s.driver.close('shutting down')));
  }
}
