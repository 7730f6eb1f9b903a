import { RpcCode } from './jsonrpc/codes.js';
import type { RpcErrorBody } from './jsonrpc/messages.js';

/**
 * An error that crosses the wire as a JSON-RPC error object. `httpStatus` is the
 * status a face answers with when the error is the whole reply (digest §2.6, §6).
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly httpStatus: number;

  constructor(code: number, message: string, options: { data?: unknown; httpStatus?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RpcError';
    this.code = code;
    this.data = options.data;
    this.httpStatus = options.httpStatus ?? httpStatusForCode(code);
  }

  toJSON(): RpcErrorBody {
    const body: RpcErrorBody = { code: this.code, message: this.message };
    if (this.data !== undefined) body.data = this.data;
    return body;
  }

  static from(body: RpcErrorBody, httpStatus?: number): RpcError {
    return new RpcError(body.code, body.message, { data: body.data, httpStatus });
  }
}

/** Local failures with fixed codes; they never cross the wire as they are. */
export type BridgeErrorCode =
  | 'BRIDGE_ERR_USAGE'
  | 'BRIDGE_ERR_UPSTREAM_UNREACHABLE'
  | 'BRIDGE_ERR_UPSTREAM_NOT_MCP'
  | 'BRIDGE_ERR_UPSTREAM_CLOSED'
  | 'BRIDGE_ERR_TIMEOUT'
  | 'BRIDGE_ERR_POOL_EXHAUSTED'
  /** The bridge could not authorize itself toward the upstream (OAuth, src/links/oauth/). */
  | 'BRIDGE_ERR_AUTH'
  | 'BRIDGE_ERR_CLOSED';

/** A local failure (bad configuration, an upstream that cannot be reached...). */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  constructor(code: BridgeErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'BridgeError';
    this.code = code;
  }
}

/** A failure of an HTTP exchange with an upstream: the status and body it answered. */
export class TransportError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string, message?: string, options: { cause?: unknown } = {}) {
    super(message ?? `upstream answered HTTP ${status}`, { cause: options.cause });
    this.name = 'TransportError';
    this.status = status;
    this.body = body;
  }
}

/** The one table from JSON-RPC code to HTTP status for whole-reply errors. */
const STATUS_BY_CODE: Record<number, number> = {
  [RpcCode.ParseError]: 400,
  [RpcCode.InvalidRequest]: 400,
  [RpcCode.MethodNotFound]: 404,
  [RpcCode.InvalidParams]: 400,
  [RpcCode.HeaderMismatch]: 400,
  [RpcCode.MissingRequiredClientCapability]: 400,
  [RpcCode.UnsupportedProtocolVersion]: 400,
  [RpcCode.SessionNotFound]: 404,
};

export function httpStatusForCode(code: number): number {
  return STATUS_BY_CODE[code] ?? 200;
}

/** How a BridgeError or any thrown value reads as a JSON-RPC error toward a client. */
export function toRpcErrorBody(err: unknown): RpcErrorBody {
  if (err instanceof RpcError) return err.toJSON();
  if (err instanceof BridgeError) {
    return { code: RpcCode.InternalError, message: err.message, data: { bridgeCode: err.code } };
  }
  const message = err instanceof Error ? err.message : String(err);
  // The upstream's HTTP status stays readable (--auth pass-through hands a 401/403 back to the client).
  if (err instanceof TransportError) return { code: RpcCode.InternalError, message, data: { status: err.status } };
  return { code: RpcCode.InternalError, message };
}
