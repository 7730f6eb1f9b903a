import type { JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import { RpcCode } from '../jsonrpc/codes.js';
import { isNotification, isRequest, isRequestId, isResponse, messageShapeProblem, type RpcErrorBody } from '../jsonrpc/messages.js';
import { MODERN_VERSIONS, isSupportedModernVersion } from '../epochs/versions.js';
import { httpStatusForCode } from '../errors.js';
import { checkParamHeaders, checkStandardHeaders, type HeaderProblem, type ParamHeaderSpec } from '../wire/index.js';
import { isServedModernMethod, methodNotFoundMessage } from './modern-methods.js';
import { modernParamsProblem } from './modern-validation-params.js';
import { invalidParamsError } from './params-shape.js';

/**
 * The 2026-07-28 validation ladder for one inbound modern message (digest
 * §2.6), pure and shared by the HTTP face and the stdio face (no headers, so
 * no header rungs). It returns a verdict; the caller writes the reply.
 */

export type ModernVerdict =
  | { ok: true; request: JSONRPCRequest }
  | { ok: true; notification: JSONRPCNotification }
  | { ok: false; status: number; error: RpcErrorBody; id: RequestId | null };

export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
export const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

const LOG_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

type Obj = Record<string, unknown>;
type Headers = Record<string, string | undefined>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function reject(id: RequestId | null, code: number, message: string, data?: unknown, status = httpStatusForCode(code)): ModernVerdict {
  return { ok: false, status, id, error: data === undefined ? { code, message } : { code, message, data } };
}

function mismatch(id: RequestId | null, p: HeaderProblem): ModernVerdict {
  const detail: Obj = { header: p.header };
  if (p.headerValue !== undefined) detail.headerValue = p.headerValue;
  if (p.bodyValue !== undefined) detail.body = p.bodyValue;
  return reject(id, RpcCode.HeaderMismatch, p.message, { mismatch: detail });
}

function metaOf(params: unknown): Obj | undefined {
  return isObj(params) && isObj(params._meta) ? params._meta : undefined;
}

/** Whether the body claims the per-request envelope ([SDK]: the protocolVersion key alone makes the claim, digest §1.2). */
export function hasEnvelopeClaim(body: unknown): boolean {
  if (!isObj(body)) return false;
  const meta = metaOf(body.params);
  return meta !== undefined && PROTOCOL_VERSION_KEY in meta;
}

/** The first problem with a request's `_meta` envelope (digest §1.2), as `{key, problem}`. */
function envelopeIssue(params: unknown): { key: string; problem: string } | undefined {
  if (!isObj(params)) return { key: 'params', problem: 'missing' };
  const meta = params._meta;
  if (!isObj(meta)) return { key: '_meta', problem: meta === undefined ? 'missing' : 'expected an object' };
  const version = meta[PROTOCOL_VERSION_KEY];
  if (version === undefined) return { key: PROTOCOL_VERSION_KEY, problem: 'missing' };
  if (typeof version !== 'string') return { key: PROTOCOL_VERSION_KEY, problem: 'expected a string' };
  const caps = meta[CLIENT_CAPABILITIES_KEY];
  if (caps === undefined) return { key: CLIENT_CAPABILITIES_KEY, problem: 'missing' };
  if (!isObj(caps)) return { key: CLIENT_CAPABILITIES_KEY, problem: 'expected an object' };
  const info = meta[CLIENT_INFO_KEY];
  if (info !== undefined && !(isObj(info) && typeof info.name === 'string' && typeof info.version === 'string')) {
    return { key: CLIENT_INFO_KEY, problem: 'expected an Implementation with string name and version' };
  }
  const level = meta[LOG_LEVEL_KEY];
  if (level !== undefined && !(typeof level === 'string' && LOG_LEVELS.has(level))) {
    return { key: LOG_LEVEL_KEY, problem: 'expected a logging level' };
  }
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== 'string' && !(typeof token === 'number' && Number.isInteger(token))) {
    return { key: 'progressToken', problem: 'expected a string or an integer' };
  }
  return undefined;
}

/** Rung 1: exactly one request or notification (digest §2.2 rule 4). */
function shapeRejection(body: unknown): ModernVerdict | undefined {
  if (Array.isArray(body)) return reject(null, RpcCode.InvalidRequest, 'Invalid Request: JSON-RPC batches are not supported in protocol revision 2026-07-28');
  if (isResponse(body)) return reject(null, RpcCode.InvalidRequest, 'Invalid Request: JSON-RPC responses cannot be sent to a 2026-07-28 server');
  if (isRequest(body) || isNotification(body)) return undefined;
  const id = isObj(body) && isRequestId(body.id) ? body.id : null;
  return reject(id, RpcCode.InvalidRequest, `Invalid Request: ${messageShapeProblem(body) ?? 'not a JSON-RPC message'}`);
}

/** Rungs 2 and 4, shared by requests and notifications. */
function versionRejection(id: RequestId | null, meta: Obj | undefined, headers: Headers | undefined): ModernVerdict | undefined {
  const claimed = meta?.[PROTOCOL_VERSION_KEY];
  const header = headers?.['mcp-protocol-version'];
  if (header !== undefined && typeof claimed === 'string' && header !== claimed) {
    return mismatch(id, {
      header: 'MCP-Protocol-Version',
      message: `Header mismatch: MCP-Protocol-Version header value '${header}' does not match body value '${claimed}'`,
      headerValue: header,
      bodyValue: claimed,
    });
  }
  return undefined;
}

function unsupported(id: RequestId | null, requested: string): ModernVerdict {
  return reject(id, RpcCode.UnsupportedProtocolVersion, 'Unsupported protocol version', { supported: [...MODERN_VERSIONS], requested });
}

/**
 * Runs the ladder in the order of digest §2.6: shape (-32600) → header/body
 * version (-32020) → envelope (-32602) → supported version (-32022) →
 * params shape of a known method (-32602, 400; modern-validation-params.ts) →
 * standard headers (-32020) → method table (-32601, 404) → `Mcp-Param-*`
 * (-32020). `headers` (lower-cased names) is undefined on stdio.
 */
export function validateModernMessage(body: unknown, headers: Headers | undefined, paramHeaders?: (tool: string) => ParamHeaderSpec[] | undefined): ModernVerdict {
  const shape = shapeRejection(body);
  if (shape) return shape;
  const msg = body as JSONRPCRequest | JSONRPCNotification;
  const meta = metaOf(msg.params);
  if (!('id' in msg)) return validateNotification(msg, meta, headers);
  const req = msg as JSONRPCRequest;
  const id = req.id;

  const version = versionRejection(id, meta, headers);
  if (version) return version;

  const issue = envelopeIssue(req.params);
  if (issue) {
    return reject(id, RpcCode.InvalidParams, `Invalid params: the per-request _meta envelope is invalid: ${issue.key}: ${issue.problem}`, { envelope: issue });
  }
  const claimed = meta![PROTOCOL_VERSION_KEY] as string;
  if (!isSupportedModernVersion(claimed)) return unsupported(id, claimed);

  // Before the standard headers: Mcp-Name mirrors params.name / params.uri, and a
  // body without a string there has nothing a header could match (-32602, not -32020).
  const bad = modernParamsProblem(req.method, req.params);
  if (bad) {
    const error = invalidParamsError(req.method, bad);
    return reject(id, error.code, error.message, error.data);
  }

  if (headers) {
    const problem = checkStandardHeaders(headers, req as { method: string; params?: Obj });
    if (problem) return mismatch(id, problem);
  }

  if (!isServedModernMethod(req.method)) return reject(id, RpcCode.MethodNotFound, methodNotFoundMessage(req.method));

  if (headers && paramHeaders && req.method === 'tools/call') {
    const params = req.params as Obj;
    const specs = typeof params.name === 'string' ? paramHeaders(params.name) : undefined;
    const problem = specs && checkParamHeaders(specs, params.arguments, headers);
    if (problem) return mismatch(id, problem);
  }
  return { ok: true, request: req };
}

/**
 * Notifications: header rules for notification POSTs are not defined (digest
 * §2.3), so present headers are cross-checked ([SDK]) but none is required,
 * and no envelope is required.
 */
function validateNotification(n: JSONRPCNotification, meta: Obj | undefined, headers: Headers | undefined): ModernVerdict {
  const version = versionRejection(null, meta, headers);
  if (version) return version;
  if (meta !== undefined && PROTOCOL_VERSION_KEY in meta) {
    const claimed = meta[PROTOCOL_VERSION_KEY];
    if (typeof claimed !== 'string') {
      const issue = { key: PROTOCOL_VERSION_KEY, problem: 'expected a string' };
      return reject(null, RpcCode.InvalidParams, `Invalid params: the per-request _meta envelope is invalid: ${issue.key}: ${issue.problem}`, { envelope: issue });
    }
    if (!isSupportedModernVersion(claimed)) return unsupported(null, claimed);
  }
  const method = headers?.['mcp-method'];
  if (method !== undefined && method !== n.method) {
    return mismatch(null, {
      header: 'Mcp-Method',
      message: `Header mismatch: Mcp-Method header value '${method}' does not match body value '${n.method}'`,
      headerValue: method,
      bodyValue: n.method,
    });
  }
  return { ok: true, notification: n };
}
