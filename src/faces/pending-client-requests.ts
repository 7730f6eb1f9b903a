import type { JSONRPCMessage, JSONRPCResponse } from '@modelcontextprotocol/server';
import { RpcCode } from '../jsonrpc/codes.js';
import { isErrorResponse, notification, request, type RpcErrorBody } from '../jsonrpc/messages.js';
import { RpcError } from '../errors.js';
import { IdTable } from '../heap/id-table.js';

/** How a server→client request is written toward the client; false when it cannot be delivered. */
export type WriteMessage = (msg: JSONRPCMessage) => boolean;

export interface ClientRequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(err: RpcError): void;
}

/**
 * The server→client requests a face has sent to one legacy client and not yet
 * seen answered. Ids are minted here (`mcp-bridge-<n>`) so they never collide
 * with ids the bridge or the client chose.
 */
export class PendingClientRequests {
  private readonly pending = new IdTable<string, Pending>();
  private seq = 0;
  private closedReason: string | undefined;

  constructor(private readonly defaultTimeoutMs: number, private readonly prefix = 'mcp-bridge-') {}

  get size(): number {
    return this.pending.size;
  }

  /**
   * Writes one request and resolves with the client's result. Rejects with the
   * client's error, or -32603 on timeout, abort, undeliverable write or close;
   * on timeout and abort the client is told with `notifications/cancelled`.
   */
  start(method: string, params: Record<string, unknown> | undefined, write: WriteMessage, opts: ClientRequestOptions = {}): Promise<Record<string, unknown>> {
    if (this.closedReason !== undefined) return Promise.reject(internal(`session closed: ${this.closedReason}`));
    if (opts.signal?.aborted) return Promise.reject(internal(`${method} aborted before it was sent`));
    const id = `${this.prefix}${++this.seq}`;
    return new Promise((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      // 2025 cancellation.mdx: the sender of a request it abandons SHOULD tell the receiver.
      const abandon = (why: string) => {
        cleanup();
        write(notification('notifications/cancelled', { requestId: id, reason: why }));
        reject(internal(why));
      };
      const onAbort = () => abandon(`${method} cancelled`);
      const timer = setTimeout(() => abandon(`${method} not answered within ${timeoutMs} ms`), timeoutMs);
      timer.unref?.();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (r) => {
          cleanup();
          resolve(r);
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
      });
      if (!write(request(id, method, params))) {
        this.pending.get(id)?.reject(internal(`cannot deliver ${method}: no open stream to the client`));
      }
    });
  }

  /** Settles the request a client response answers; false when no pending request has that id. */
  settle(response: JSONRPCResponse): boolean {
    const entry = this.pending.get(String(response.id));
    if (!entry) return false;
    if (isErrorResponse(response)) entry.reject(RpcError.from(response.error as RpcErrorBody));
    else entry.resolve(((response as { result?: Record<string, unknown> }).result ?? {}) as Record<string, unknown>);
    return true;
  }

  /** Rejects everything pending, and everything started later, with -32603. */
  close(reason: string): void {
    this.closedReason ??= reason;
    for (const entry of [...this.pending.values()]) entry.reject(internal(`session closed: ${reason}`));
  }
}

function internal(message: string): RpcError {
  return new RpcError(RpcCode.InternalError, message);
}
