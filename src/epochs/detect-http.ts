import type { UpstreamFacts } from '../contracts/upstream.js';
import { BridgeError } from '../errors.js';
import type { Logger } from '../log.js';
import { modernRequestHeaders } from '../wire/modern-headers.js';
import { classifyDiscoverAnswer, classifyInitializeAnswer, classifySseAnswer, type ProbeDecision, type ProbeObservation } from './classify-probe.js';
import { probeSse } from './detect-sse.js';
import { deleteSession, describeObservation, HTTP_PROBE_TIMEOUT_MS, observePost } from './http-observe.js';
import { discoverProbe, initializeProbe } from './probe-requests.js';
import { factsFromDiscover, factsFromInitialize } from './upstream-facts.js';
import { LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION, MODERN_VERSIONS } from './versions.js';

export interface DetectHttpOptions {
  logger: Logger;
  /** Skip the epoch decision and run only that epoch's handshake. */
  epoch?: 'auto' | 'modern' | 'initialize' | 'http+sse';
  /** Per step; default 10 s. */
  stepTimeoutMs?: number;
  /** Sends the probe through this fetch (the daemon's OAuth-authorized one); default the global fetch. */
  fetch?: typeof fetch;
}

type Obj = Record<string, unknown>;
/** What each leg answered, for the message of a failed detection. */
type Trail = { step: string; what: string }[];

function notMcp(url: string, trail: Trail, extra?: string): BridgeError {
  const parts = trail.map((t) => `${t.what} to ${t.step}`);
  const said = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : (parts[0] ?? 'nothing');
  return new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `${url} answered ${said}${extra ? `; ${extra}` : ''}; it does not look like an MCP server`);
}

/** Acts on the non-era verdicts every leg may reach: throws for unreachable, auth and not-MCP. */
function stopUnlessEra(url: string, d: ProbeDecision, o: ProbeObservation, trail: Trail): void {
  if (d.verdict === 'unreachable') throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `cannot reach ${url}: ${describeObservation(o)}`);
  if (d.verdict === 'auth-required') {
    throw new BridgeError('BRIDGE_ERR_UPSTREAM_UNREACHABLE', `${url} answered ${describeObservation(o)} to ${trail.at(-1)?.step}: it needs credentials (pass them with --header 'Authorization: …')`);
  }
  if (d.verdict === 'not-mcp') throw notMcp(url, trail);
}

/**
 * Detects the epoch of a Streamable HTTP or 2024 SSE URL in the spec's order
 * (digest §2.7): server/discover, then initialize, then GET expecting an
 * `endpoint` event; and returns the facts of the first leg that answered.
 */
export async function detectHttp(url: string, headers: Record<string, string>, opts: DetectHttpOptions): Promise<UpstreamFacts> {
  const log = opts.logger.child({ probe: url });
  const epoch = opts.epoch ?? 'auto';
  const timeoutMs = opts.stepTimeoutMs ?? HTTP_PROBE_TIMEOUT_MS;
  const trail: Trail = [];
  const doFetch = opts.fetch ?? fetch;

  // Steps 1–3: a modern POST; -32022 naming a mutual version earns one retry.
  if (epoch === 'auto' || epoch === 'modern') {
    let version: string = LATEST_MODERN_VERSION;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const body = discoverProbe(`mcp-bridge-discover-probe-${attempt}`, version);
      const o = await observePost(url, { ...headers, ...modernRequestHeaders({ method: body.method, params: body.params as Obj }, version) }, body, timeoutMs, doFetch);
      trail.push({ step: 'server/discover', what: describeObservation(o) });
      const d = classifyDiscoverAnswer(o, MODERN_VERSIONS);
      log.debug('probe.discover', { attempt, verdict: d.verdict, evidence: d.evidence });
      if (d.verdict === 'modern') return factsFromDiscover(d.discover, 'streamable-http');
      stopUnlessEra(url, d, o, trail);
      // A lenient legacy server may have opened a session for the probe (a 200 `result: {}`): end it politely.
      if (o.kind === 'http' && o.sessionId) await deleteSession(url, headers, o.sessionId, LATEST_LEGACY_VERSION, doFetch);
      if (d.verdict !== 'retry-modern' || attempt === 2) break;
      version = d.version;
    }
    if (epoch === 'modern') throw notMcp(url, trail, 'it did not answer as a 2026-07-28 server');
  }

  // Step 3 fallback: the 2025 Streamable HTTP handshake.
  if (epoch === 'auto' || epoch === 'initialize') {
    const o = await observePost(url, headers, initializeProbe('mcp-bridge-initialize-probe'), timeoutMs, doFetch);
    trail.push({ step: 'initialize', what: describeObservation(o) });
    const d = classifyInitializeAnswer(o, 'http');
    log.debug('probe.initialize', { verdict: d.verdict, evidence: d.evidence });
    if (d.verdict === 'initialize') {
      const facts = factsFromInitialize(d.initializeResult, 'initialize', 'streamable-http');
      if (o.kind === 'http' && o.sessionId) await deleteSession(url, headers, o.sessionId, facts.protocolVersion, doFetch);
      return facts;
    }
    if (d.verdict === 'retry-modern') {
      // A modern-only server refusing initialize with its versions (digest §2.4).
      const hint = epoch === 'initialize' ? '; use --upstream-epoch auto or modern' : ', yet did not answer server/discover as one';
      throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `${url} is not an initialize-era server: it refused initialize naming 2026-07-28-era version ${d.version}${hint}`);
    }
    stopUnlessEra(url, d, o, trail);
    if (epoch === 'initialize') throw notMcp(url, trail, 'it did not answer as an initialize-era server');
    if (d.verdict !== 'try-sse') throw notMcp(url, trail);
  }

  // Step 4: GET expecting an `endpoint` event (2024-11-05 HTTP+SSE).
  const sse = await probeSse(url, headers, timeoutMs, doFetch);
  trail.push({ step: 'GET', what: describeObservation(sse.observation) });
  const d = classifySseAnswer(sse.observation);
  log.debug('probe.sse', { verdict: d.verdict, evidence: d.evidence });
  if (d.verdict === 'http+sse') {
    if (sse.initializeResult) return factsFromInitialize(sse.initializeResult, 'http+sse', 'http+sse');
    throw new BridgeError('BRIDGE_ERR_UPSTREAM_NOT_MCP', `${url} sent an HTTP+SSE endpoint event, but ${sse.problem ?? 'the handshake failed'}`);
  }
  stopUnlessEra(url, d, sse.observation, trail);
  throw notMcp(url, trail);
}
