import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import type { LegacyHandler, LegacyRequestContext, LegacySessionHandler, ModernHandler } from '../contracts/downstream.js';
import { RpcError } from '../errors.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { errorResponse } from '../jsonrpc/messages.js';

const SHUTTING_DOWN = 'mcp-bridge is shutting down';

/**
 * Counts the requests the bridges are answering, whatever face they came in
 * on, so a graceful stop can wait for them (SIGTERM, `--shutdown-timeout`).
 * Once draining, new requests and new sessions are refused with -32603 and
 * the bridges' open listens are ended with their graceful result.
 */
export class InflightCalls {
  private count = 0;
  private drainingFlag = false;
  private readonly idleWaiters = new Set<() => void>();
  private readonly drainHooks: Array<() => void> = [];

  /** Requests being answered now. */
  get size(): number {
    return this.count;
  }

  get draining(): boolean {
    return this.drainingFlag;
  }

  /** The same handler, counted; `drain` reaches its `drain()` (listens end gracefully). */
  wrapModern(h: ModernHandler): ModernHandler {
    if (h.drain) this.drainHooks.push(() => h.drain!());
    return {
      handle: (req, ctx) => (this.drainingFlag ? Promise.resolve(refusal(req.id)) : this.track(() => h.handle(req, ctx))),
      paramHeaders: h.paramHeaders ? (tool) => h.paramHeaders!(tool) : undefined,
      drain: h.drain ? () => h.drain!() : undefined,
      close: () => h.close(),
    };
  }

  /** The same handler, its sessions' requests counted; no new session opens while draining. */
  wrapLegacy(h: LegacyHandler): LegacyHandler {
    return {
      openSession: async (params, info, channel) => {
        if (this.drainingFlag) throw new RpcError(RpcCode.InternalError, SHUTTING_DOWN);
        const opened = await h.openSession(params, info, channel);
        return { result: opened.result, session: this.wrapSession(opened.session) };
      },
      close: () => h.close(),
    };
  }

  /**
   * Starts draining and resolves once no request is in flight (true), or when
   * `timeoutMs` passes or `hurry` aborts (false).
   */
  drain(timeoutMs: number, hurry?: AbortSignal): Promise<boolean> {
    if (!this.drainingFlag) {
      this.drainingFlag = true;
      for (const hook of this.drainHooks) hook();
    }
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (idle: boolean) => {
        clearTimeout(timer);
        hurry?.removeEventListener('abort', onHurry);
        this.idleWaiters.delete(onIdle);
        resolve(idle);
      };
      const onIdle = () => finish(true);
      const onHurry = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.idleWaiters.add(onIdle);
      if (hurry?.aborted) onHurry();
      else hurry?.addEventListener('abort', onHurry, { once: true });
    });
  }

  private wrapSession(s: LegacySessionHandler): LegacySessionHandler {
    return new CountedSession(s, this);
  }

  /** @internal One request of a counted session: refused while draining, else counted while it runs. */
  countRequest(id: RequestId, run: () => Promise<JSONRPCResponse>): Promise<JSONRPCResponse> {
    return this.drainingFlag ? Promise.resolve(refusal(id)) : this.track(run);
  }

  /** Counts a call while it runs; a reaction rather than an async frame, since a listen may run for hours. */
  private track(run: () => Promise<JSONRPCResponse>): Promise<JSONRPCResponse> {
    this.count++;
    let answer: Promise<JSONRPCResponse>;
    try {
      answer = run();
    } catch (err) {
      this.done();
      return Promise.reject(err);
    }
    answer.then(this.onDone, this.onDone);
    return answer;
  }

  private readonly onDone = (): void => this.done();

  private done(): void {
    this.count--;
    if (this.count === 0) for (const w of [...this.idleWaiters]) w();
  }
}

function refusal(id: RequestId): JSONRPCResponse {
  return errorResponse(id, { code: RpcCode.InternalError, message: SHUTTING_DOWN });
}

/** A session whose requests are counted: a class, not three closures per idle session (issue 17). */
class CountedSession implements LegacySessionHandler {
  constructor(
    private readonly inner: LegacySessionHandler,
    private readonly calls: InflightCalls,
  ) {}

  handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse> {
    return this.calls.countRequest(req.id, () => this.inner.handleRequest(req, ctx));
  }

  handleNotification(n: JSONRPCNotification): void {
    this.inner.handleNotification(n);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
