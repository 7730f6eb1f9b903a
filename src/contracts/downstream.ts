import type {
  ClientCapabilities,
  Implementation,
  InitializeRequestParams,
  InitializeResult,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '@modelcontextprotocol/server';
import type { Principal } from '../identity/principal.js';
import type { CallSignal } from './upstream.js';
import type { ParamHeaderSpec } from '../wire/param-headers.js';

export type { ParamHeaderSpec } from '../wire/param-headers.js';

/**
 * The contracts between faces and bridges (the downstream side). A face owns a
 * client transport: it frames, validates and classifies; it never translates.
 * A bridge implements these handlers for the upstream's epoch.
 */

// ─── modern clients ─────────────────────────────────────────────────────────

/** What a face gives a bridge with each validated modern request. */
export interface ModernRequestContext {
  /** Aborted when the client closes the response stream (HTTP) or sends notifications/cancelled (stdio). */
  signal: AbortSignal;
  /**
   * Sends a notification on this request's own stream: progress, message, and
   * for `subscriptions/listen` the acknowledgement and the subscription's
   * notifications. On HTTP the first call switches the reply to SSE.
   */
  notify(n: JSONRPCNotification): void;
  transport: 'http' | 'stdio';
  /** Request headers, names lower-cased (HTTP only). */
  headers?: Record<string, string | undefined>;
  /**
   * Calls `listener` once when the request is cancelled (what aborts `signal`),
   * without making the face build an AbortSignal; for handlers on the hot path
   * and those that stay open (listens). Absent on faces without it.
   */
  onCancel?(listener: () => void): void;
  /** Who the request acts for (DESIGN "Identity"); absent when the bridge authenticates no one. */
  principal?: Principal;
}

/** The bridge-side handler of modern traffic, one per daemon. */
export interface ModernHandler {
  /**
   * Answers one request that passed the face's envelope and header checks.
   * Resolves with exactly one response carrying `req.id`; never rejects.
   */
  handle(req: JSONRPCRequest, ctx: ModernRequestContext): Promise<JSONRPCResponse>;
  /**
   * The `x-mcp-header` declarations of a tool, so the HTTP face can check
   * `Mcp-Param-*` headers (digest §2.5). Undefined when the tool is unknown or
   * declares none.
   */
  paramHeaders?(toolName: string): ParamHeaderSpec[] | undefined;
  /**
   * Graceful stop has begun: end every open `subscriptions/listen` with its
   * graceful result (digest §1.8); other calls in flight run on.
   */
  drain?(): void;
  close(): Promise<void>;
}

// ─── legacy clients ─────────────────────────────────────────────────────────

/** Facts about one downstream legacy session, fixed at initialize. */
export interface LegacySessionInfo {
  id: string;
  /** The version the bridge answered initialize with. */
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation;
  transport: 'streamable-http' | 'http+sse' | 'ws' | 'stdio';
  /** Who opened the session; only that principal may use it (DESIGN "Identity"). */
  principal?: Principal;
}

/** Server→client traffic toward one legacy session. */
export interface LegacyChannel {
  /** Sends a notification; false when it cannot be delivered (no GET stream open). */
  notify(n: JSONRPCNotification): boolean;
  /**
   * Sends a server→client request with a face-minted id and resolves with the
   * client's result, or rejects with an RpcError carrying the client's error
   * (or -32603 when the session closes or the signal aborts).
   */
  request(method: string, params: Record<string, unknown> | undefined, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<Record<string, unknown>>;
}

/** What a face gives a bridge with each legacy request. */
export interface LegacyRequestContext extends LegacyChannel {
  session: LegacySessionInfo;
  /** Aborted when the client sends notifications/cancelled for this request, or the session ends. */
  signal: AbortSignal;
  /**
   * The same cancel without an AbortSignal, where the face has one: reading `signal` builds an
   * AbortController, and one per request kept each call's state alive past a scavenge (issue 17).
   */
  cancel?: CallSignal;
}

/** One downstream legacy session, as the bridge serves it. */
export interface LegacySessionHandler {
  /** Answers one request (never initialize or ping: the face handles those). Never rejects. */
  handleRequest(req: JSONRPCRequest, ctx: LegacyRequestContext): Promise<JSONRPCResponse>;
  /** A client notification other than initialized and cancelled (which the face handles). */
  handleNotification(n: JSONRPCNotification): void;
  /** The session ended (DELETE, idle, disconnect, shutdown). Frees upstream resources. */
  close(): Promise<void>;
}

/** The bridge-side handler of legacy traffic, one per daemon. */
export interface LegacyHandler {
  /**
   * Answers `initialize` and opens the session's state. `channel` carries the
   * session's unsolicited traffic (GET stream, http+sse stream, WebSocket,
   * stdout). Rejects with an RpcError to refuse the session.
   */
  openSession(
    params: InitializeRequestParams,
    info: Omit<LegacySessionInfo, 'protocolVersion'>,
    channel: LegacyChannel,
  ): Promise<{ result: InitializeResult; session: LegacySessionHandler }>;
  close(): Promise<void>;
}
