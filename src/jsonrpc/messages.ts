import type {
  JSONRPCErrorResponse,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
  JSONRPCResultResponse,
  RequestId,
} from '@modelcontextprotocol/server';

/** The error member of a JSON-RPC error response. */
export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** The outcome of one call, without an id: what links return and bridges wrap. */
export type RpcOutcome = { result: Record<string, unknown> } | { error: RpcErrorBody };

/** Any parsed JSON-RPC 2.0 message, or an array of them (2025-03-26 batches). */
export type AnyMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A valid JSON-RPC id: string or number (null is not an id of a request). At
 * run time a RequestId may also be a bigint: an integer id beyond ±(2^53−1),
 * kept exact by the codec (id-codec.ts).
 */
export function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint';
}

export function isRequest(m: unknown): m is JSONRPCRequest {
  return isObj(m) && m.jsonrpc === '2.0' && typeof m.method === 'string' && isRequestId(m.id);
}

export function isNotification(m: unknown): m is JSONRPCNotification {
  return isObj(m) && m.jsonrpc === '2.0' && typeof m.method === 'string' && !('id' in m);
}

export function isResultResponse(m: unknown): m is JSONRPCResultResponse {
  return isObj(m) && m.jsonrpc === '2.0' && 'result' in m && isRequestId(m.id);
}

export function isErrorResponse(m: unknown): m is JSONRPCErrorResponse {
  return isObj(m) && m.jsonrpc === '2.0' && isObj(m.error) && typeof (m.error as Obj).code === 'number';
}

export function isResponse(m: unknown): m is JSONRPCResponse {
  return isResultResponse(m) || isErrorResponse(m);
}

/** Why a value is not a JSON-RPC message, or undefined when it is one. */
export function messageShapeProblem(m: unknown): string | undefined {
  if (!isObj(m)) return 'a JSON-RPC message must be a JSON object';
  if (m.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (isRequest(m) || isNotification(m) || isResponse(m)) return undefined;
  if ('method' in m && typeof m.method !== 'string') return 'method must be a string';
  if ('id' in m && !isRequestId(m.id) && m.id !== null) return 'id must be a string or a number';
  return 'not a request, notification or response';
}

export function resultResponse(id: RequestId, result: Record<string, unknown>): JSONRPCResultResponse {
  return { jsonrpc: '2.0', id, result } as JSONRPCResultResponse;
}

/** An error response; id null is allowed for errors that cannot name a request. */
export function errorResponse(id: RequestId | null, error: RpcErrorBody): JSONRPCErrorResponse {
  const body: RpcErrorBody = { code: error.code, message: error.message };
  if (error.data !== undefined) body.data = error.data;
  return { jsonrpc: '2.0', id, error: body } as JSONRPCErrorResponse;
}

/** Wraps an id-less outcome as the response to `id`. */
export function responseFor(id: RequestId, outcome: RpcOutcome): JSONRPCResponse {
  return 'error' in outcome ? errorResponse(id, outcome.error) : resultResponse(id, outcome.result);
}

/** The id-less outcome carried by a response. */
export function outcomeOf(response: JSONRPCResponse): RpcOutcome {
  if ('error' in response) return { error: response.error as RpcErrorBody };
  return { result: (response as JSONRPCResultResponse).result as Record<string, unknown> };
}

export function notification(method: string, params?: Record<string, unknown>): JSONRPCNotification {
  return params === undefined
    ? ({ jsonrpc: '2.0', method } as JSONRPCNotification)
    : ({ jsonrpc: '2.0', method, params } as JSONRPCNotification);
}

export function request(id: RequestId, method: string, params?: Record<string, unknown>): JSONRPCRequest {
  return params === undefined
    ? ({ jsonrpc: '2.0', id, method } as JSONRPCRequest)
    : ({ jsonrpc: '2.0', id, method, params } as JSONRPCRequest);
}

/** `params._meta` of a request or notification, when present. */
export function metaOf(m: { params?: unknown }): Record<string, unknown> | undefined {
  const p = m.params;
  if (!isObj(p)) return undefined;
  return isObj(p._meta) ? p._meta : undefined;
}
