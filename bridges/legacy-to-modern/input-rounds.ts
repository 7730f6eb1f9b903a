import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { LegacyRequestContext } from '../../src/contracts/downstream.js';
import type { CallSignal, ModernLink, OutboundRequest } from '../../src/contracts/upstream.js';
import { LazyAbort } from '../../src/links/lazy-abort.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import { notification, type RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { Logger } from '../../src/log.js';
import { inputRequestGap, parseInputRequests, toInputResponse, toLegacyServerRequest, type InputRequest } from '../shared/input-requests.js';
import { legacyFailure, toLegacyOutcome } from './legacy-results.js';
import type { SessionState } from './session-state.js';

type Obj = Record<string, unknown>;

/** The only methods that may answer `input_required` (digest §1.6). */
export const MRTR_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** The SDK's pause before retrying a requestState-only round (digest §1.7). */
export const STATE_ONLY_PAUSE_MS = 250;

export interface InputRoundsOptions {
  link: ModernLink;
  logger: Logger;
  /** Deadline of each upstream leg. */
  callTimeoutMs: number;
  /** Most `input_required` rounds answered before giving up. */
  maxInputRounds: number;
  /** How long the client has to answer one server→client request. */
  inputTimeoutMs: number;
  stateOnlyPauseMs?: number;
}

/** One request of a legacy session as it runs upstream. */
export interface RoundsCall {
  method: string;
  params: Obj | undefined;
  state: SessionState;
  ctx: LegacyRequestContext;
  /** Aborts the upstream call and the loop (client cancel, session close). */
  signal: AbortSignal | LazyAbort;
}

function internal(message: string, bridgeCode?: string): RpcOutcome {
  return { error: bridgeCode ? { code: RpcCode.InternalError, message, data: { bridgeCode } } : { code: RpcCode.InternalError, message } };
}

function pause(ms: number, signal: CallSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs one legacy request against the modern server (digest §5.3 case B):
 * stamped with the session's envelope; each `input_required` round becomes real
 * server→client requests to the legacy client, sent in parallel, and the
 * request is retried with a new id, the same params, `inputResponses` and the
 * byte-exact `requestState`, until a final outcome or `maxInputRounds`.
 * Resolves with the outcome the legacy client receives; never rejects.
 */
export async function runInputRounds(call: RoundsCall, opts: InputRoundsOptions): Promise<RpcOutcome> {
  const { method, state, ctx, signal } = call;
  const base = state.stamp(call.params);
  const onNotification = (n: JSONRPCNotification) => void ctx.notify(n);
  const urlElicitations: string[] = [];
  // --auth pass-through: the session's own credentials go upstream with each of its calls.
  const headers = ctx.session.principal?.upstreamHeaders;
  let retry: Obj | undefined;
  for (let round = 0; ; round++) {
    // The first round sends `base` itself (stamped afresh for this call), with members set one by one:
    // spread copies per call outlived a scavenge (src/links/upstream-http.ts, options).
    const request: OutboundRequest = { method, params: retry === undefined ? base : { ...base, ...retry } };
    if (headers !== undefined) request.headers = headers;
    const outcome = await opts.link.call(request, { signal, timeoutMs: opts.callTimeoutMs, onNotification });
    if (signal.aborted) return internal(`${method} cancelled`, 'BRIDGE_ERR_CLOSED');
    if ('error' in outcome || outcome.result.resultType !== 'input_required') {
      const final = toLegacyOutcome(method, outcome);
      // 2025-11-25 clients may be told the url flow they opened is over (digest §5.3 case B step 6).
      if ('result' in final) for (const elicitationId of urlElicitations) ctx.notify(notification('notifications/elicitation/complete', { elicitationId }));
      return final;
    }
    if (!MRTR_METHODS.has(method)) return internal(`upstream answered ${method} with input_required, which only tools/call, prompts/get and resources/read may return`);
    if (round >= opts.maxInputRounds) {
      return internal(`upstream still needed input for ${method} after ${opts.maxInputRounds} rounds; mcp-bridge gave up (--max-input-rounds)`, 'BRIDGE_ERR_TIMEOUT');
    }
    const next = await answerRound(outcome.result, call, opts, urlElicitations, round + 1);
    if ('outcome' in next) return next.outcome;
    retry = next.retry;
  }
}

/** Fulfils one `input_required` result; resolves with the retry's extra params or the final outcome. */
async function answerRound(result: Obj, call: RoundsCall, opts: InputRoundsOptions, urlElicitations: string[], round: number): Promise<{ retry: Obj } | { outcome: RpcOutcome }> {
  const { method, state, ctx, signal } = call;
  const requestState = result.requestState;
  if (requestState !== undefined && typeof requestState !== 'string') return { outcome: internal(`upstream sent a requestState that is not a string for ${method}`) };
  const parsed = parseInputRequests(result.inputRequests);
  if ('problem' in parsed) return { outcome: internal(`upstream sent a malformed input_required for ${method}: ${parsed.problem}`) };
  const stateOnly = requestState === undefined ? {} : { requestState };
  opts.logger.debug('l2m.input_required', { method, round, keys: parsed.entries.map(([k]) => k), requestState: requestState !== undefined });
  if (parsed.entries.length === 0) {
    if (requestState === undefined) return { outcome: internal(`upstream sent an input_required for ${method} with neither inputRequests nor requestState`) };
    await pause(opts.stateOnlyPauseMs ?? STATE_ONLY_PAUSE_MS, signal);
    return signal.aborted ? { outcome: internal(`${method} cancelled`, 'BRIDGE_ERR_CLOSED') } : { retry: stateOnly };
  }
  for (const [key, req] of parsed.entries) {
    const gap = inputRequestGap(req, state.identity.protocolVersion, state.identity.clientCapabilities);
    if (gap) return { outcome: legacyFailure(method, `${method} needs ${req.method} (input "${key}"), which this client cannot answer: ${gap}`) };
  }
  const answered = await askClient(parsed.entries, call, opts, urlElicitations);
  if ('outcome' in answered) return answered;
  return { retry: { inputResponses: answered.responses, ...stateOnly } };
}

/** Sends every input request at once; the first failure cancels the rest (the client is told). */
async function askClient(entries: [string, InputRequest][], call: RoundsCall, opts: InputRoundsOptions, urlElicitations: string[]): Promise<{ responses: Obj } | { outcome: RpcOutcome }> {
  const round = new AbortController();
  const signal = AbortSignal.any([call.signal instanceof LazyAbort ? call.signal.signal : call.signal, round.signal]);
  const asks = entries.map(async ([key, req]) => {
    const legacy = toLegacyServerRequest(req, call.state.identity.protocolVersion);
    try {
      const result = await call.ctx.request(legacy.method, legacy.params, { signal, timeoutMs: opts.inputTimeoutMs });
      if (legacy.elicitationId !== undefined && result.action === 'accept') urlElicitations.push(legacy.elicitationId);
      return [key, toInputResponse(result)] as const;
    } catch (err) {
      round.abort();
      throw Object.assign(new Error(`input "${key}" (${req.method}): ${(err as Error).message}`), { cause: err });
    }
  });
  try {
    return { responses: Object.fromEntries(await Promise.all(asks)) };
  } catch (err) {
    await Promise.allSettled(asks);
    if (call.signal.aborted) return { outcome: internal(`${call.method} cancelled`, 'BRIDGE_ERR_CLOSED') };
    opts.logger.info('l2m.input_failed', { method: call.method, err });
    return { outcome: internal(`${call.method} could not get the input the server asked for: ${(err as Error).message}`) };
  }
}
