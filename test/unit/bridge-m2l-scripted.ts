import type { InitializeResult, JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { CallHandlers, LegacyLink, LegacyUpstreamSession, OutboundRequest, UnsolicitedHandlers, UpstreamInit } from '../../src/contracts/upstream.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';

/**
 * A scripted in-memory legacy link for the bridge-m2l unit tests: an
 * implementation of our own LegacyLink / LegacyUpstreamSession contracts whose
 * calls run test scripts, so every timing is under the test's control.
 */

export type Obj = Record<string, unknown>;

/** What a scripted upstream call can do while it runs. */
export interface Upstream {
  req: OutboundRequest;
  handlers: CallHandlers;
  /** Sends a server→client request tied to this call; resolves with what the bridge answered (or its error). */
  ask(method: string, params?: Obj): Promise<Obj | { error: unknown }>;
  notify(method: string, params?: Obj): void;
}

export type Script = (u: Upstream) => Promise<RpcOutcome>;

export const serverIds = { next: 1 };

export class ScriptedSession implements LegacyUpstreamSession {
  readonly id = `s-${Math.random().toString(36).slice(2)}`;
  readonly correlates: boolean;
  readonly initializeResult = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'scripted', version: '1' } } as unknown as InitializeResult;
  closed = false;
  unsolicited: UnsolicitedHandlers | undefined;
  calls: Array<{ req: OutboundRequest; cancelled: boolean }> = [];
  constructor(readonly init: UpstreamInit, private readonly scripts: Record<string, Script>, correlates: boolean) {
    this.correlates = correlates;
  }
  call(req: OutboundRequest, handlers: CallHandlers = {}): Promise<RpcOutcome> {
    const record = { req, cancelled: false };
    this.calls.push(record);
    const script = this.scripts[req.method] ?? (async () => ({ result: {} }));
    return new Promise<RpcOutcome>((resolve) => {
      handlers.signal?.addEventListener('abort', () => {
        record.cancelled = true;
        resolve({ error: { code: -32603, message: 'cancelled' } });
      });
      const u: Upstream = {
        req,
        handlers,
        ask: (method, params) =>
          handlers.onServerRequest!({ jsonrpc: '2.0', id: serverIds.next++, method, params } as JSONRPCRequest).then(
            (r) => r,
            (error: unknown) => ({ error }),
          ),
        notify: (method, params) => handlers.onNotification?.({ jsonrpc: '2.0', method, params } as JSONRPCNotification),
      };
      script(u).then(resolve);
    });
  }
  async notify(): Promise<void> {}
  setUnsolicitedHandlers(h: UnsolicitedHandlers | undefined): void {
    this.unsolicited = h;
  }
  readonly #closeListeners: Array<(reason: string) => void> = [];
  onClose(listener: (reason: string) => void): void {
    this.#closeListeners.push(listener);
  }
  /** Ends the session as a dying upstream would. */
  kill(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.#closeListeners.splice(0)) l(reason);
  }
  async close(): Promise<void> {
    this.kill('closed');
  }
}

export class ScriptedLink implements LegacyLink {
  readonly kind = 'stdio' as const;
  sessions: ScriptedSession[] = [];
  constructor(private readonly scripts: Record<string, Script>, private readonly correlates = false) {}
  async openSession(init: UpstreamInit): Promise<LegacyUpstreamSession> {
    const s = new ScriptedSession(init, this.scripts, this.correlates);
    this.sessions.push(s);
    return s;
  }
  async close(): Promise<void> {}
}

