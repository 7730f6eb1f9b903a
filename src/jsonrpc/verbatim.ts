import type { JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import type { RpcOutcome } from './messages.js';

/**
 * A message's own bytes, kept beside its parse so a relay that changes nothing
 * can send them on instead of serializing the parse again: byte-exact (fields
 * the bridge does not know stay as they came) and, for a large tool result or
 * argument, the cost of one JSON.stringify less. Responses come from the
 * upstream, requests from the client.
 */
interface Verbatim {
  /** The whole JSON-RPC response message as the upstream sent it. */
  text: string;
  /** The id inside `text`. */
  id: RequestId;
}

/**
 * The bytes ride on the parse itself, under a symbol key that is not
 * enumerable: a spread, `Object.assign`, `for…in`, `JSON.stringify` and
 * `structuredClone` all leave it behind, so a copy never carries stale bytes,
 * exactly as with a WeakMap keyed by the object. A WeakMap cost more here: the
 * young-generation GC keeps an entry's value alive while its key is young, so
 * every call's text outlived a scavenge and was promoted (issue 17).
 */
const VERBATIM = Symbol('mcp-bridge.verbatim');
const INBOUND = Symbol('mcp-bridge.inbound');

function attach(target: object, key: symbol, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, configurable: true, enumerable: false });
}

type Carrier = { [VERBATIM]?: Verbatim; [INBOUND]?: string };

/** Marks `outcome` as the parse of `text`, a response carrying `id`. */
export function withVerbatim<T extends RpcOutcome>(outcome: T, text: string, id: RequestId): T {
  attach(outcome, VERBATIM, { text, id });
  return outcome;
}

/**
 * Hands the upstream bytes of an unchanged `outcome` on to the `response` built
 * from it, when they carry the same id (a relay that sent the client's id).
 */
export function keepVerbatim(outcome: RpcOutcome, response: JSONRPCResponse): JSONRPCResponse {
  const v = (outcome as Carrier)[VERBATIM];
  if (v !== undefined && v.id === response.id) attach(response, VERBATIM, v);
  return response;
}

/** The bytes to send for `message`, when it is an upstream response passed on unchanged. */
export function verbatimText(message: object): string | undefined {
  return (message as Carrier)[VERBATIM]?.text;
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** Marks a parsed client body as the parse of `text`. */
export function withInboundText<T>(body: T, text: string): T {
  if (typeof body === 'object' && body !== null) attach(body, INBOUND, text);
  return body;
}

/** The client's bytes of a parsed body, whatever it holds (a body forwarded to another replica as it came). */
export function inboundText(body: object): string | undefined {
  return (body as Carrier)[INBOUND];
}

/**
 * The client's bytes for `request`, when they hold nothing but the four request
 * members: what the upstream would get from serializing it, as the client wrote it.
 */
export function requestText(request: object): string | undefined {
  const text = (request as Carrier)[INBOUND];
  if (text === undefined) return undefined;
  for (const key in request) if (!REQUEST_KEYS.has(key)) return undefined;
  return text;
}
