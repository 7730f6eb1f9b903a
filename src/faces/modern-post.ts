import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import type { ModernHandler } from '../contracts/downstream.js';
import { httpStatusForCode, toRpcErrorBody } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { stringifyJsonRpc } from '../jsonrpc/id-codec.js';
import { errorResponse, type RpcErrorBody } from '../jsonrpc/messages.js';
import type { Logger } from '../log.js';
import { principalOf, type Principal } from '../identity/principal.js';
import { upstreamRefusal } from './auth-upstream-refusal.js';
import { LazySseReply } from './lazy-sse-reply.js';
import { LiveSet } from '../heap/live-set.js';
import { ModernInflight } from './modern-inflight.js';
import { validateModernMessage } from './modern-validation.js';

export interface ModernPostOptions {
  modern: ModernHandler;
  logger: Logger;
  heartbeatMs: number;
  /** Called when the ladder refuses a request (metrics: `refused_total{reason="validation"}`). */
  onReject?: () => void;
}

/** Request headers with lower-cased names and repeated values joined, as the ladder reads them. */
export function flatHeaders(req: IncomingMessage): Record<string, string | undefined> {
  // node joins repeated request headers itself and keeps an array for set-cookie alone, so only that needs a copy.
  if (req.headers['set-cookie'] === undefined) return req.headers as Record<string, string | undefined>;
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** Writes a whole-reply JSON-RPC error (ladder rejections, digest §2.6). */
export function writeJsonError(res: ServerResponse, status: number, id: RequestId | null, error: RpcErrorBody, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(stringifyJsonRpc(errorResponse(id, error)));
}

/**
 * One modern POST: the validation ladder, then `ModernHandler.handle` with a
 * lazy reply (JSON, or SSE once the handler notifies first). Closing the
 * connection is the cancel (digest §1.9, §2.3).
 */
export class ModernPost {
  /** The requests being answered, for shutdown. */
  private readonly inflight = new LiveSet<ModernInflight>();
  private readonly log: Logger;

  constructor(private readonly opts: ModernPostOptions) {
    this.log = opts.logger.child({ epoch: 'modern', transport: 'http' });
  }

  /** Number of requests being answered. */
  get size(): number {
    return this.inflight.size;
  }

  /** Serves one POST whose body was parsed and classified modern by the app. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, headers: Record<string, string | undefined> = flatHeaders(req)): Promise<void> | undefined {
    const modern = this.opts.modern;
    const verdict = validateModernMessage(body, headers, modern.paramHeaders ? (tool) => modern.paramHeaders!(tool) : undefined);
    if (!verdict.ok) {
      this.log.debug('modern.reject', { id: verdict.id, code: verdict.error.code, status: verdict.status });
      this.opts.onReject?.();
      writeJsonError(res, verdict.status, verdict.id, verdict.error);
      return undefined;
    }
    if ('notification' in verdict) {
      this.onNotification(verdict.notification, req);
      res.writeHead(202).end();
      return undefined;
    }
    return this.serve(verdict.request, req, res, headers, principalOf(req));
  }

  /** Aborts every request in flight (shutdown). */
  close(): void {
    for (const entry of this.inflight.snapshot()) entry.cancel(new Error('bridge shutting down'));
    this.inflight.clear();
  }

  /**
   * Runs the handler and writes its answer. A reaction rather than an async
   * frame: a listen keeps its request open for as long as its client stays.
   */
  private serve(request: JSONRPCRequest, req: IncomingMessage, res: ServerResponse, headers: Record<string, string | undefined>, principal: Principal | undefined): Promise<void> {
    const reply = new LazySseReply(res, { heartbeatMs: this.opts.heartbeatMs, logger: this.log });
    const entry = new ModernInflight(reply, headers, principal);
    this.inflight.add(entry);
    reply.onClientDrop(() => entry.cancel(new Error('client closed the response stream')));
    const finish = (response: JSONRPCResponse): void => {
      entry.settled = true;
      this.inflight.delete(entry);
      // A cancelled request gets no answer; handler errors stay in-band at 200, except the MCP codes (digest §1.10).
      // --auth pass-through: the upstream's 401/403 for the client's token reaches the client as such.
      const refused = entry.cancelled ? undefined : upstreamRefusal(principal, response, req);
      if (refused) reply.finish(response, refused.status, refused.headers);
      else reply.finish(entry.cancelled ? undefined : response, statusFor(response));
    };
    const threw = (err: unknown): void => {
      // The contract says handle never rejects; keep the one-answer rule if it does.
      this.log.warn('modern.handler_threw', { id: request.id, method: request.method, err });
      finish(errorResponse(request.id, toRpcErrorBody(err)));
    };
    let answer: Promise<JSONRPCResponse>;
    try {
      answer = this.opts.modern.handle(request, entry);
    } catch (err) {
      answer = Promise.reject(err);
    }
    return answer.then(finish, threw);
  }

  /**
   * Modern notification POSTs are accepted (202) and dropped. On HTTP the cancel
   * is closing the response stream (digest §1.9, §2.3); a posted
   * `notifications/cancelled` (the SDK client sends one when it ends a listen,
   * after aborting the stream) names an id that only its sender's connection
   * can scope, and several clients on one address may use the same id, so
   * honouring it could cancel another client's request.
   */
  private onNotification(n: JSONRPCNotification, _req: IncomingMessage): void {
    this.log.debug('modern.notification_dropped', { method: n.method });
  }
}

/** The 2026 codes whose HTTP status the spec fixes, whoever produced them (digest §1.10 table: 400). */
const MCP_STATUS_CODES: ReadonlySet<number> = new Set([RpcCode.HeaderMismatch, RpcCode.MissingRequiredClientCapability, RpcCode.UnsupportedProtocolVersion]);

/** The status of a JSON reply carrying `response`; other handler errors (-32601, -32602, -32603…) stay at 200 ([SDK]). */
function statusFor(response: JSONRPCResponse): number {
  const code = 'error' in response ? (response.error as { code?: unknown }).code : undefined;
  return typeof code === 'number' && MCP_STATUS_CODES.has(code) ? httpStatusForCode(code) : 200;
}
