import type {
  ClientCapabilities,
  DiscoverResult,
  Implementation,
  InitializeResult,
  JSONRPCNotification,
  JSONRPCRequest,
  RequestId,
} from '@modelcontextprotocol/server';
import type { RpcOutcome } from '../jsonrpc/messages.js';
import type { ParamHeaderSpec } from '../wire/param-headers.js';

/**
 * The contracts between bridges and links (the upstream side). A link owns the
 * connection to the server: processes, HTTP clients, sessions, id remapping.
 * It never translates between epochs.
 */

/**
 * The abort part of an AbortSignal, which is all a link needs of it: an
 * AbortSignal is one, and so is a CancelScope (links/cancel-scope.ts), which
 * the hot path uses because an AbortSignal costs an EventTarget per call.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

/** A function, or an object whose `handleEvent` is called (no closure per call), as EventTarget takes them. */
export type AbortListener = (() => void) | { handleEvent(): void };

/** What a call wants to be told while it runs upstream. */
export interface CallHandlers {
  /**
   * A server→client request tied to this call (`elicitation/create`,
   * `sampling/createMessage`, `roots/list`). Resolve with the result object, or
   * reject with an `RpcError` to answer with a JSON-RPC error. `ping` never
   * reaches here: links answer it locally.
   */
  onServerRequest?(req: JSONRPCRequest): Promise<Record<string, unknown>>;
  /**
   * A notification tied to this call: progress for its token (the token is
   * mapped back to the one the caller sent), and on links that correlate,
   * anything else sent on the call's own stream.
   */
  onNotification?(n: JSONRPCNotification): void;
  /** Aborting cancels the call upstream (legacy: notifications/cancelled; modern HTTP: close the stream). */
  signal?: CallSignal;
  /** Per-call deadline; on expiry the call is cancelled upstream and resolves with a -32603 `{error}`. */
  timeoutMs?: number;
}

/** One request to send upstream. The link assigns its own wire id unless told otherwise. */
export interface OutboundRequest {
  method: string;
  params?: Record<string, unknown>;
  /** Modern HTTP links send this id verbatim (needed for listen subscription ids). Others remap. */
  id?: RequestId;
  /**
   * The request as the client wrote it (same method, params and id): a modern
   * HTTP link sends these bytes instead of serializing the request again.
   */
  text?: string;
  /** `--auth pass-through`: the client's headers for this request (modern HTTP links). Secret. */
  headers?: Readonly<Record<string, string>>;
}

/** Traffic from the server that belongs to no call. */
export interface UnsolicitedHandlers {
  notification(n: JSONRPCNotification): void;
  /** Resolve with a result or reject with an RpcError; the link writes the response. */
  request(req: JSONRPCRequest): Promise<Record<string, unknown>>;
}

/** The parameters a bridge initializes an upstream legacy session with. */
export interface UpstreamInit {
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
  /** The principal's id (DESIGN "Identity"): part of the pool key, so two users never share a session or child. */
  principal?: string;
  /** `--auth pass-through`: the client's headers for this session's upstream requests (HTTP links). Secret. */
  headers?: Readonly<Record<string, string>>;
}

/** One initialized session with a legacy (initialize-era or http+sse) server. */
export interface LegacyUpstreamSession {
  readonly id: string;
  readonly initializeResult: InitializeResult;
  /** The init this session was opened with. */
  readonly init: UpstreamInit;
  /**
   * True when server→client requests arrive tied to the call that caused them
   * (Streamable HTTP: on that POST's SSE stream). False for stdio, http+sse and
   * WebSocket, where a call that may need input must hold the session alone.
   */
  readonly correlates: boolean;
  readonly closed: boolean;
  /**
   * Sends a request and resolves with its outcome. Never rejects: server errors,
   * timeouts, aborts and a dying session all resolve as `{error}` (-32603 for local
   * failures, with `data.bridgeCode` naming the cause when it is known).
   */
  call(req: OutboundRequest, handlers?: CallHandlers): Promise<RpcOutcome>;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Set by the owner; until set, unsolicited requests are answered with an error and notifications dropped. */
  setUnsolicitedHandlers(h: UnsolicitedHandlers | undefined): void;
  /** Called once when the session ends for any reason (child exit, 404, stream drop, close()). */
  onClose(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

/** A way to open legacy sessions with one upstream server. */
export interface LegacyLink {
  readonly kind: 'stdio' | 'streamable-http' | 'http+sse' | 'ws';
  openSession(init: UpstreamInit): Promise<LegacyUpstreamSession>;
  close(): Promise<void>;
}

/** The connection to a modern (2026-07-28) server. Stateless: any call on any connection. */
export interface ModernLink {
  readonly kind: 'stdio' | 'http';
  /**
   * Sends one modern request (the caller supplies the full `_meta` envelope).
   * Notifications on the call's stream (progress, message, listen ack and
   * listen notifications with their subscriptionId mapped back) go to
   * `handlers.onNotification`. `subscriptions/listen` resolves at its graceful end.
   */
  call(req: OutboundRequest, handlers?: CallHandlers): Promise<RpcOutcome>;
  /**
   * HTTP links: the valid `x-mcp-header` specs of a tool seen in a `tools/list`
   * result that passed through `call()` (digest §2.5); undefined when unknown or none.
   */
  paramHeaders?(toolName: string): ParamHeaderSpec[] | undefined;
  close(): Promise<void>;
}

/** What detection learned about the upstream, and what `probe` prints. */
export interface UpstreamFacts {
  epoch: 'modern' | 'initialize' | 'http+sse';
  transport: 'stdio' | 'streamable-http' | 'http+sse' | 'ws';
  protocolVersion: string;
  supportedVersions?: string[];
  serverInfo?: Implementation;
  capabilities: Record<string, unknown>;
  instructions?: string;
  /** For modern upstreams, the discover result as received. */
  discover?: DiscoverResult;
  /** For legacy upstreams, the InitializeResult of the probe session. */
  initialize?: InitializeResult;
}

/** What an upstream answered that may ask for credentials: a 401, or a 403 (`insufficient_scope`). */
export interface AuthChallenge {
  status: number;
  /** The `WWW-Authenticate` header, as sent. */
  wwwAuthenticate?: string;
}

/** Retries one request has spent on challenges; the auth bounds them. */
export interface AuthTries {
  unauthorized: number;
  stepUps: number;
}

/**
 * The bridge's own credentials toward the upstream (OAuth: src/links/oauth/).
 * Wherever a link builds an upstream request it asks for the header, and on a
 * 401/403 asks whether to send the request again.
 */
export interface UpstreamAuth {
  /** The `Authorization` value for the next request, refreshed first when the token is about to expire. */
  header(): Promise<string | undefined>;
  /**
   * The same value when it is known without waiting (tokens loaded, none about to expire): a string, or
   * undefined for none; null when `header()` must be awaited. Keeps the usual exchange free of async frames.
   */
  headerNow(): string | undefined | null;
  /**
   * The upstream answered `c` to a request sent with `sent`. Resolves true once
   * new credentials are ready (send it again), false when the answer is not an
   * OAuth challenge; rejects with BridgeError BRIDGE_ERR_AUTH when the flow fails.
   */
  challenged(c: AuthChallenge, sent: string | undefined, tries: AuthTries): Promise<boolean>;
}
