/**
 * Pure epoch classification of an upstream's answers to the probe sequence
 * (digest §2.7 client-side probing, §3 stdio detection): discover, then
 * initialize, then the 2024 SSE GET. Each step's caller acts on the verdict.
 */
import { MODERN_VERSIONS } from './versions.js';

/** What one probe step saw. */
export type ProbeObservation =
  /** An HTTP reply; `message` is the first JSON-RPC message of the JSON or SSE body. */
  | { kind: 'http'; status: number; contentType?: string; message?: unknown; sessionId?: string }
  | { kind: 'sse-endpoint'; endpoint: string }
  | { kind: 'no-endpoint'; status?: number; detail?: string }
  | { kind: 'stdio-reply'; message: unknown }
  | { kind: 'timeout' }
  | { kind: 'closed' }
  | { kind: 'network-error'; message: string };

/** What to do next, with a human-readable reason for the logs. */
export type ProbeDecision =
  | { verdict: 'modern'; evidence: string; discover: Record<string, unknown> }
  /** `-32022` naming a mutual modern version: retry once with `version`. */
  | { verdict: 'retry-modern'; evidence: string; version: string }
  | { verdict: 'try-initialize'; evidence: string }
  | { verdict: 'initialize'; evidence: string; initializeResult: Record<string, unknown> }
  | { verdict: 'try-sse'; evidence: string }
  | { verdict: 'http+sse'; evidence: string; endpoint: string }
  | { verdict: 'not-mcp'; evidence: string }
  | { verdict: 'unreachable'; evidence: string }
  | { verdict: 'auth-required'; evidence: string };

const UNSUPPORTED_VERSION = -32022;
const METHOD_NOT_FOUND = -32601;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function resultOf(message: unknown): Obj | undefined {
  return isObj(message) && isObj(message.result) ? message.result : undefined;
}

/** A JSON-RPC response or message object, however lenient (`jsonrpc` marker, or a `result` / `error` member). */
function isJsonRpc(message: unknown): boolean {
  return isObj(message) && (message.jsonrpc === '2.0' || 'result' in message || 'error' in message);
}

function errorOf(message: unknown): { code: number; message: string; data?: unknown } | undefined {
  if (!isObj(message) || !isObj(message.error) || typeof message.error.code !== 'number') return undefined;
  const e = message.error;
  return { code: e.code as number, message: typeof e.message === 'string' ? e.message : '', data: e.data };
}

/** `data.supported` of a -32022 error, when it is a non-empty list of strings ([SDK] evidence rule, digest §2.7 step 3). */
function supportedList(data: unknown): string[] | undefined {
  if (!isObj(data) || !Array.isArray(data.supported)) return undefined;
  const list = data.supported.filter((v): v is string => typeof v === 'string');
  return list.length > 0 ? list : undefined;
}

/** Our preferred modern version that the server also lists. */
function mutual(ours: readonly string[], theirs: readonly string[]): string | undefined {
  return ours.find((v) => theirs.includes(v));
}

/** The shared -32022 rule: a mutual modern version → retry-modern; anything else → undefined. */
function retryFrom32022(err: { data?: unknown }, ours: readonly string[]): ProbeDecision | undefined {
  const supported = supportedList(err.data);
  const version = supported && mutual(ours, supported);
  return version ? { verdict: 'retry-modern', evidence: `-32022 lists mutual modern version ${version}`, version } : undefined;
}

function describe(o: ProbeObservation): string {
  if (o.kind !== 'http') return o.kind;
  const err = errorOf(o.message);
  return `HTTP ${o.status}${err ? ` with JSON-RPC error ${err.code} '${err.message}'` : o.message === undefined ? ' without a JSON-RPC body' : ''}`;
}

/** Not era verdicts (digest §2.7 step 5): auth, server errors, network failures; undefined for everything else. */
function nonEra(o: ProbeObservation): ProbeDecision | undefined {
  if (o.kind === 'network-error') return { verdict: 'unreachable', evidence: `network error: ${o.message}` };
  if (o.kind !== 'http') return undefined;
  if (o.status === 401 || o.status === 403) return { verdict: 'auth-required', evidence: `HTTP ${o.status}` };
  if (o.status >= 500) return { verdict: 'not-mcp', evidence: `${describe(o)}: server error` };
  return undefined;
}

/** Step 1–3: the answer to a `server/discover` POST or stdio line. */
export function classifyDiscoverAnswer(o: ProbeObservation, modernVersions: readonly string[]): ProbeDecision {
  const early = nonEra(o);
  if (early) return early;
  if (o.kind === 'sse-endpoint') return { verdict: 'http+sse', evidence: 'endpoint event', endpoint: o.endpoint };
  if (o.kind === 'no-endpoint') return { verdict: 'not-mcp', evidence: `no endpoint event${o.detail ? `: ${o.detail}` : ''}` };
  // §3: no reply within the timeout, or a closed pipe, means legacy on stdio.
  if (o.kind === 'timeout' || o.kind === 'closed') return { verdict: 'try-initialize', evidence: `${o.kind} on discover` };
  const http = o.kind === 'http';
  const err = errorOf(o.message);
  // Modern servers MUST implement discover, so -32601 is legacy even inside a 200 (§2.7 step 3).
  if (err?.code === METHOD_NOT_FOUND) return { verdict: 'try-initialize', evidence: `${describe(o)}: discover unknown` };
  if (err?.code === UNSUPPORTED_VERSION) {
    const retry = retryFrom32022(err, modernVersions);
    if (retry) return retry;
    return { verdict: 'try-initialize', evidence: `${describe(o)}: no mutual modern version listed` };
  }
  const result = resultOf(o.message);
  if (result && Array.isArray(result.supportedVersions)) {
    if (http && (o.status < 200 || o.status > 299)) return { verdict: 'try-initialize', evidence: `${describe(o)} carrying a result` };
    const theirs = result.supportedVersions.filter((v): v is string => typeof v === 'string');
    if (mutual(modernVersions, theirs)) return { verdict: 'modern', evidence: `DiscoverResult supports ${theirs.join(', ')}`, discover: result };
    return { verdict: 'try-initialize', evidence: `DiscoverResult lists no mutual modern version (${theirs.join(', ')})` };
  }
  // A success that is not JSON-RPC at all (an HTML page, plain JSON) is no MCP server.
  if (http && o.status < 400 && !isJsonRpc(o.message)) return { verdict: 'not-mcp', evidence: `${describe(o)}: not a JSON-RPC answer` };
  // §2.7: anything else that is neither a valid DiscoverResult nor a recognised modern error is legacy,
  // e.g. a lenient legacy server's 200 `result: {}`, a 4xx with an empty, non-JSON or unrecognised body.
  return { verdict: 'try-initialize', evidence: `${describe(o)}: no modern evidence` };
}

function isInitializeResult(r: Obj | undefined): r is Obj {
  return r !== undefined && typeof r.protocolVersion === 'string' && isObj(r.capabilities);
}

/** Step 4: the answer to an `initialize` POST or stdio line. */
export function classifyInitializeAnswer(o: ProbeObservation, transport: 'http' | 'stdio'): ProbeDecision {
  const early = nonEra(o);
  if (early) return early;
  if (o.kind === 'sse-endpoint') return { verdict: 'http+sse', evidence: 'endpoint event', endpoint: o.endpoint };
  if (o.kind !== 'http' && o.kind !== 'stdio-reply') return { verdict: 'not-mcp', evidence: `${o.kind} on initialize` };
  const result = resultOf(o.message);
  if (isInitializeResult(result)) {
    const session = o.kind === 'http' && o.sessionId ? `, session ${o.sessionId}` : '';
    return { verdict: 'initialize', evidence: `InitializeResult ${String(result.protocolVersion)}${session}`, initializeResult: result };
  }
  const err = errorOf(o.message);
  // A modern-only server lists its versions in the initialize error (digest §2.4).
  if (err?.code === UNSUPPORTED_VERSION) {
    const retry = retryFrom32022(err, MODERN_VERSIONS);
    if (retry) return retry;
  }
  if (transport === 'http' && o.kind === 'http' && [400, 404, 405].includes(o.status) && err?.code !== UNSUPPORTED_VERSION) {
    return { verdict: 'try-sse', evidence: `${describe(o)} on initialize` };
  }
  return { verdict: 'not-mcp', evidence: `${describe(o)} on initialize` };
}

/** Step 4, last leg: the answer to `GET` with `Accept: text/event-stream` (2024-11-05 HTTP+SSE, digest §4.2). */
export function classifySseAnswer(o: ProbeObservation): ProbeDecision {
  if (o.kind === 'sse-endpoint') return { verdict: 'http+sse', evidence: `endpoint event ${o.endpoint}`, endpoint: o.endpoint };
  const early = nonEra(o);
  if (early) return early;
  if (o.kind === 'no-endpoint') return { verdict: 'not-mcp', evidence: `no endpoint event${o.status ? ` (HTTP ${o.status})` : ''}${o.detail ? `: ${o.detail}` : ''}` };
  return { verdict: 'not-mcp', evidence: `${describe(o)} instead of an endpoint event` };
}
