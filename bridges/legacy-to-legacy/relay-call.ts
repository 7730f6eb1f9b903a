import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import type { LegacyRequestContext } from '../../src/contracts/downstream.js';
import type { CallSignal, LegacyUpstreamSession } from '../../src/contracts/upstream.js';
import { errorResponse, responseFor } from '../../src/jsonrpc/messages.js';
import { toRpcErrorBody } from '../../src/errors.js';
import { admitsLevel, type McpLogLevel } from './log-levels.js';

/** How one relayed call behaves beyond the plain request. */
export interface RelayOptions {
  timeoutMs: number;
  /** Ends the call; a server request it causes ends with it (an AbortSignal, or the request's own, then). */
  signal: CallSignal;
  /** False: server requests are left to the session's unsolicited path (see PooledUpstream.tiesServerRequests). */
  serverRequests: boolean;
  /** The downstream session's log level, read when a `notifications/message` arrives. */
  level?: () => McpLogLevel | undefined;
  /** Told the method of each call-tied server request the client answered. */
  answered?: (method: string) => void;
}

/**
 * Sends a legacy client's request to a legacy upstream session unchanged and
 * answers with the client's id. Server→client requests tied to the call go to
 * the client that caused it (its answer or error goes back upstream); call-tied
 * notifications follow on the same path, log messages filtered by the session's
 * level. Never rejects.
 */
export async function relayCall(session: LegacyUpstreamSession, req: JSONRPCRequest, ctx: LegacyRequestContext, opts: RelayOptions): Promise<JSONRPCResponse> {
  const params = req.params as Record<string, unknown> | undefined;
  try {
    const onServerRequest = opts.serverRequests
      ? async (r: JSONRPCRequest) => {
          const result = await ctx.request(r.method, r.params as Record<string, unknown> | undefined, { signal: opts.signal instanceof AbortSignal ? opts.signal : ctx.signal });
          opts.answered?.(r.method);
          return result;
        }
      : undefined;
    const outcome = await session.call(params === undefined ? { method: req.method } : { method: req.method, params }, {
      onServerRequest,
      onNotification: (n: JSONRPCNotification) => {
        if (n.method === 'notifications/message' && !admitsLevel(opts.level?.(), (n.params as { level?: unknown } | undefined)?.level)) return;
        ctx.notify(n);
      },
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return responseFor(req.id, outcome);
  } catch (err) {
    // The contract says call() resolves; a link that throws anyway still gets one answer out.
    return errorResponse(req.id, toRpcErrorBody(err));
  }
}
