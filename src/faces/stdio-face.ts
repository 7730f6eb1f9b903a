import { randomBytes } from 'node:crypto';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { LegacyHandler, ModernHandler, ModernRequestContext } from '../contracts/downstream.js';
import { MODERN_VERSIONS } from '../epochs/versions.js';
import { toRpcErrorBody } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { idText, stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse, isRequest, isRequestId, isResponse, type RpcErrorBody } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { LineBuffer, LineTooLongError } from '../wire/index.js';
import { parseInboundJson } from './inbound-json.js';
import { LegacySessionDriver } from './legacy-session-driver.js';
import { hasEnvelopeClaim, validateModernMessage } from './modern-validation.js';
import { IdTable } from '../heap/id-table.js';

export interface StdioFaceOptions {
  modern: ModernHandler;
  legacy: LegacyHandler;
  logger: Logger;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  inputTimeoutMs?: number;
  /** Longest accepted stdin line; a longer one is answered -32700 and skipped. */
  maxLineBytes?: number;
  /** Deeper JSON is answered -32600 before parsing. */
  maxJsonDepth?: number;
}

/**
 * opening: nothing decided yet. probe: a modern `server/discover` was served,
 * and an `initialize` next still switches to legacy ([SDK] serveStdio, digest §3).
 */
type Phase = 'opening' | 'probe' | 'modern' | 'legacy' | 'closed';

/**
 * The stdio face: exactly one client on stdin/stdout, newline-delimited JSON,
 * of either epoch. The opening exchange picks the epoch and pins it (digest
 * §3 "Detecting the epoch of a stdio client"). stdout carries only JSON-RPC.
 */
export class StdioFace {
  readonly done: Promise<void>;
  private phase: Phase = 'opening';
  private driver: LegacySessionDriver | undefined;
  private readonly inflight = new IdTable<string, AbortController>();
  private readonly lines: LineBuffer;
  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;
  private readonly log: Logger;
  private outputOpen = true;
  /** Inside a line that outgrew `maxLineBytes`: its bytes are dropped up to its newline. */
  private skipping = false;
  private closing: Promise<void> | undefined;
  private markDone!: () => void;
  private readonly onData = (chunk: Buffer | string) => this.receive(chunk);
  private readonly onEnd = () => void this.close();

  private constructor(private readonly opts: StdioFaceOptions) {
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.log = opts.logger.child({ face: 'stdio' });
    this.lines = new LineBuffer({ maxLineBytes: opts.maxLineBytes });
    this.done = new Promise((resolve) => (this.markDone = resolve));
  }

  /** Starts reading stdin (or `input`) at once. */
  static start(opts: StdioFaceOptions): StdioFace {
    const face = new StdioFace(opts);
    face.input.on('data', face.onData);
    face.input.once('end', face.onEnd);
    face.input.once('close', face.onEnd);
    face.output.on('error', (err: Error) => {
      // The client is gone (EPIPE): nothing can be answered any more.
      face.log.warn('stdio.output_failed', { err });
      face.outputOpen = false;
      void face.close();
    });
    return face;
  }

  /** Stops reading, aborts modern requests in flight and closes the legacy session; resolves `done`. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const rest = this.lines.flush();
    if (rest !== undefined) this.line(rest);
    this.phase = 'closed';
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.pause();
    for (const ac of this.inflight.values()) ac.abort(new Error('stdin closed'));
    this.inflight.clear();
    await this.driver?.close('stdin closed');
    this.markDone();
  }

  /**
   * Feeds the buffer one line at a time, so an oversized line costs only
   * itself: the lines after it in the same chunk are still read, and its tail
   * in later chunks is skipped up to its newline (one error per long line).
   */
  private receive(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start < bytes.length) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl === -1 ? bytes.length : nl + 1;
      const piece = bytes.subarray(start, end);
      start = end;
      if (this.skipping) {
        if (nl !== -1) this.skipping = false;
        continue;
      }
      let lines: string[];
      try {
        lines = this.lines.push(piece);
      } catch (err) {
        if (!(err instanceof LineTooLongError)) throw err;
        this.write(errorResponse(null, { code: RpcCode.ParseError, message: `Parse error: ${err.message} (see --max-line)` }));
        this.skipping = nl === -1;
        continue;
      }
      for (const l of lines) this.line(l);
    }
  }

  private line(text: string): void {
    const parsed = parseInboundJson(text, this.opts.maxJsonDepth, 'Parse error: the line is not valid JSON');
    if (!parsed.ok) {
      this.write(errorResponse(null, parsed.error));
      return;
    }
    this.dispatch(parsed.body);
  }

  private dispatch(msg: unknown): void {
    switch (this.phase) {
      case 'closed':
        return;
      case 'legacy':
        return this.toLegacy(msg);
      case 'modern':
        if (isRequest(msg) && msg.method === 'initialize' && !hasEnvelopeClaim(msg)) return this.refuseInitialize(msg);
        return this.toModern(msg);
      default:
        return this.opening(msg);
    }
  }

  /** The first messages: an envelope claim means modern, anything else is legacy traffic. */
  private opening(msg: unknown): void {
    if (isResponse(msg)) {
      this.log.warn('stdio.response_before_epoch', {});
      return;
    }
    // After a server/discover probe only `initialize` switches to legacy ([SDK] serveStdio, digest §3); anything else pins modern.
    if (this.phase === 'probe' && !hasEnvelopeClaim(msg) && !(isRequest(msg) && msg.method === 'initialize')) {
      this.phase = 'modern';
      return this.toModern(msg);
    }
    if (!hasEnvelopeClaim(msg)) {
      this.phase = 'legacy';
      this.driver = new LegacySessionDriver({
        handler: this.opts.legacy,
        transport: 'stdio',
        sessionId: randomBytes(16).toString('hex'),
        send: (m) => this.write(m),
        logger: this.log,
        inputTimeoutMs: this.opts.inputTimeoutMs,
      });
      this.log.debug('stdio.epoch', { epoch: 'legacy' });
      return this.toLegacy(msg);
    }
    const verdict = validateModernMessage(msg, undefined);
    // A bad envelope or version decides nothing ([SDK]); a valid one pins modern.
    if (!verdict.ok && verdict.error.code !== RpcCode.MethodNotFound) return this.answerRejection(verdict, msg);
    const isDiscover = verdict.ok && 'request' in verdict && verdict.request.method === 'server/discover';
    const isNote = verdict.ok && 'notification' in verdict;
    this.phase = isDiscover || (isNote && this.phase === 'probe') ? 'probe' : 'modern';
    this.log.debug('stdio.epoch', { epoch: 'modern', provisional: this.phase === 'probe' });
    this.toModern(msg);
  }

  private toLegacy(msg: unknown): void {
    void this.driver!.receive(msg).then(
      (answer) => answer !== undefined && this.write(answer),
      (err) => this.log.error('stdio.legacy_failed', { err }),
    );
  }

  private toModern(msg: unknown): void {
    if (isResponse(msg)) {
      // Clients do not send responses in 2026 (digest §1.5); answering one could loop.
      this.log.warn('stdio.modern_response_dropped', { id: msg.id });
      return;
    }
    const verdict = validateModernMessage(msg, undefined);
    if (!verdict.ok) return this.answerRejection(verdict, msg);
    if ('notification' in verdict) return this.onNotification(verdict.notification);
    void this.serve(verdict.request);
  }

  private async serve(request: JSONRPCRequest): Promise<void> {
    const key = idKey(request.id);
    if (this.inflight.has(key)) {
      this.write(errorResponse(request.id, { code: RpcCode.InvalidRequest, message: `Invalid Request: id ${idText(request.id)} is already in use` }));
      return;
    }
    const controller = new AbortController();
    this.inflight.set(key, controller);
    let settled = false;
    const ctx: ModernRequestContext = {
      signal: controller.signal,
      transport: 'stdio',
      // Nothing more for a request once answered or cancelled (digest §3 "Cancellation").
      notify: (n) => {
        if (!settled && !controller.signal.aborted) this.write(n);
      },
    };
    let response;
    try {
      response = await this.opts.modern.handle(request, ctx);
    } catch (err) {
      this.log.warn('stdio.handler_threw', { id: request.id, method: request.method, err });
      response = errorResponse(request.id, toRpcErrorBody(err));
    } finally {
      settled = true;
      if (this.inflight.get(key) === controller) this.inflight.delete(key);
    }
    if (!controller.signal.aborted) this.write(response);
  }

  private onNotification(n: JSONRPCNotification): void {
    if (n.method !== 'notifications/cancelled') {
      this.log.debug('stdio.notification_dropped', { method: n.method });
      return;
    }
    const requestId = (n.params as { requestId?: unknown } | undefined)?.requestId;
    if (!isRequestId(requestId)) return;
    this.inflight.get(idKey(requestId))?.abort(new Error('cancelled by the client'));
  }

  /** A legacy handshake on a connection pinned modern ([SDK]: -32022 naming the modern versions). */
  private refuseInitialize(msg: JSONRPCRequest): void {
    const requested = (msg.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    const data: Record<string, unknown> = { supported: [...MODERN_VERSIONS] };
    if (typeof requested === 'string') data.requested = requested;
    this.write(errorResponse(msg.id, { code: RpcCode.UnsupportedProtocolVersion, message: 'Unsupported protocol version', data }));
  }

  private answerRejection(verdict: { id: RequestId | null; error: RpcErrorBody }, msg: unknown): void {
    // JSON-RPC: a notification gets no answer, even a refusal.
    const isNote = typeof msg === 'object' && msg !== null && !Array.isArray(msg) && 'method' in msg && !('id' in msg);
    if (isNote) {
      this.log.debug('stdio.notification_refused', { code: verdict.error.code });
      return;
    }
    this.write(errorResponse(verdict.id, verdict.error));
  }

  private write(msg: JSONRPCMessage | JSONRPCMessage[]): boolean {
    if (!this.outputOpen) return false;
    this.output.write(stringifyJsonRpc(msg) + '\n');
    return true;
  }
}

/** One key per id: 1, "1" and a bigint 1n-style id never share one. */
function idKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}
