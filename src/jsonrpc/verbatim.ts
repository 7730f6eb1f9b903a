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

const verbatim = new WeakMap<object, Verbatim>();

/** Marks `outcome` as the parse of `text`, a response carrying `id`. */
export function withVerbatim<T extends RpcOutcome>(outcome: T, text: string, id: RequestId): T {
  verbatim.set(outcome, { text, id });
  return outcome;
}

/**
 * Hands the upstream bytes of an unchanged `outcome` on to the `response` built
 * from it, when they carry the same id (a relay that sent the client's id).
 */
export function keepVerbatim(outcome: RpcOutcome, response: JSONRPCResponse): JSONRPCResponse {
  const v = verbatim.get(outcome);
  if (v !== undefined && v.id === response.id) verbatim.set(response, v);
  return response;
}

/** The bytes to send for `message`, when it is an upstream response passed on unchanged. */
export function verbatimText(message: object): string | undefined {
  return verbatim.get(message)?.text;
}

const inbound = new WeakMap<object, string>();
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** Marks a parsed client body as the parse of `text`. */
export function withInboundText<T>(body: T, text: string): T {
  if (typeof body === 'object' && body !== null) inbound.set(body, text);
  return body;
}

/** The client's bytes of a parsed body, whatever it holds (a body forwarded to another replica as it came). */
export function inboundText(body: object): string | undefined {
  return inbound.get(body);
}

/**
 * The client's bytes for `request`, when they hold nothing but the four request
 * members: what the upstream would get from serializing it, as the client wrote it.
 */
export function requestText(request: object): string | undefined {
  const text = inbound.get(request);
  if (text === undefined) return undefined;
  for (const key in request) if (!REQUEST_KEYS.has(key)) return undefined;
  return text;
}
