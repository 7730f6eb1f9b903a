import type { Implementation, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { LegacyUpstreamSession, UpstreamInit } from '../../src/contracts/upstream.js';
import { toRpcErrorBody } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcErrorBody, RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { SessionPool } from '../../src/links/session-pool.js';
import type { Logger } from '../../src/log.js';
import { principalId } from '../../src/identity/principal.js';
import { ParkedCalls } from '../shared/parked-calls.js';
import type { RequestStateCodec } from '../shared/request-state.js';
import type { LogRelay } from './log-relay.js';
import { META, type ModernEnvelope, upstreamParams } from './modern-envelope.js';
import { MrtrCall, RUNNING_SLOT, type InputRequestEntry, type Leg, type LegOutcome } from './mrtr-call.js';
import { UrlElicitationPending, urlElicitationRound } from './url-elicitation-required.js';
import { LiveSet } from '../../src/heap/live-set.js';

/**
 * Multi round-trip requests in front of a legacy server (digest §1.7, §5.3
 * case A). A first leg leases a session (exclusive where server requests cannot
 * be correlated) and starts the upstream call; a leg that ends with input
 * requests parks the call under a sealed `requestState`; a retry opens the
 * state, answers the pending upstream requests and waits on the same call.
 * A 2025-11-25 `-32042` ends the call; its url elicitations are parked as a
 * round of their own and the retry re-issues the request upstream.
 */

export interface MrtrRoundsOptions {
  pool: SessionPool;
  codec: RequestStateCodec;
  logRelay: LogRelay;
  logger: Logger;
  /** Active time one leg may wait for the upstream. */
  callTimeoutMs: number;
  /** Gathering window for server requests of one round. */
  gatherMs: number;
  serverInfo: Implementation;
  /** Parked calls at most (`--max-parked`); one more is cancelled upstream and answered -32603. */
  maxParked?: number;
  /** Parked calls of one principal at most (`--max-parked-per-principal`), answered the same way. */
  maxParkedPerPrincipal?: number;
}

/** One modern request to a method that may return `input_required`. */
export interface MrtrRequest {
  req: JSONRPCRequest;
  env: ModernEnvelope;
  ctx: ModernRequestContext;
  init: UpstreamInit;
  /** Turns the upstream's final outcome into the modern one. */
  shape(outcome: RpcOutcome): RpcOutcome;
}

/** The requestState claim that carries a round's input requests to its retry. */
const ASKED = 'q';
/**
 * Largest round (JSON characters) the state carries. The client sends the
 * state back in its retry, so a round near `--max-body` (a sampling request
 * with images, say) would make the retry too large: such a round stays on
 * the parked call instead.
 */
const CARRY_MAX_CHARS = 64 * 1024;

type Found = { call: MrtrCall; answers?: unknown } | { error: RpcErrorBody } | { outcome: RpcOutcome };
type Parked = MrtrCall | UrlElicitationPending;

/** The table of calls that span legs, and the leg protocol around them. */
export class MrtrRounds {
  readonly #opts: MrtrRoundsOptions;
  readonly #parked: ParkedCalls<Parked>;
  readonly #active = new LiveSet<MrtrCall, typeof RUNNING_SLOT>(RUNNING_SLOT);
  /** Calls that may still receive server requests; pruned as they end. */
  readonly #live = new LiveSet<MrtrCall>();

  constructor(opts: MrtrRoundsOptions) {
    this.#opts = opts;
    this.#parked = new ParkedCalls<Parked>({
      ttlMs: opts.codec.ttlMs,
      onExpire: (ref) => opts.logger.info('m2l.parked_expired', { ref }),
    });
  }

  /** Calls parked now, waiting for a retry. */
  get parked(): number {
    return this.#parked.size;
  }

  /** Answers one leg: the final result, another `input_required`, or an error. Never rejects. */
  async run(r: MrtrRequest): Promise<RpcOutcome> {
    const found = r.env.params.requestState === undefined ? await this.#begin(r) : await this.#resume(r);
    if ('error' in found) return found;
    if ('outcome' in found) return found.outcome;
    const call = found.call;
    const leg: Leg = {
      notify: (n) => r.ctx.notify(n),
      signal: r.ctx.signal,
      clientCapabilities: r.env.clientCapabilities,
      progressToken: r.env.progressToken,
      logLevel: r.env.logLevel,
    };
    this.#active.add(call);
    await this.#opts.logRelay.ensure(call.session, r.env.logLevel);
    const ended = await call.runLeg(leg, found.answers);
    this.#active.delete(call);
    return this.#conclude(r, call, ended);
  }

  /**
   * The one live call on `session`, when there is exactly one: an unsolicited
   * server request on that session can only belong to it (digest §5.3 step 8).
   */
  soleLiveCallOn(session: LegacyUpstreamSession): MrtrCall | undefined {
    const live: MrtrCall[] = [];
    for (const call of this.#live.snapshot()) {
      if (!call.live) this.#live.delete(call);
      else if (call.session === session) live.push(call);
    }
    return live.length === 1 ? live[0] : undefined;
  }

  /** Cancels every parked and running call (bridge shutdown). */
  close(reason: string): void {
    this.#parked.cancelAll(reason);
    for (const call of this.#active.snapshot()) call.cancel(reason);
    this.#active.clear();
  }

  async #begin(r: MrtrRequest): Promise<Found> {
    try {
      // Exclusive: on sessions that cannot correlate, this call must be alone to own what the server asks (DESIGN).
      const lease = await this.#opts.pool.acquire(r.init, { exclusive: true, signal: r.ctx.signal });
      const call = new MrtrCall({
        lease,
        method: r.req.method,
        params: upstreamParams(r.env.params),
        originalProgressToken: r.env.progressToken,
        logRelay: this.#opts.logRelay,
        logger: this.#opts.logger,
        legTimeoutMs: this.#opts.callTimeoutMs,
        gatherMs: this.#opts.gatherMs,
      });
      this.#live.add(call);
      return { call };
    } catch (err) {
      const shaped = r.shape({ error: toRpcErrorBody(err) });
      return 'error' in shaped ? shaped : { error: toRpcErrorBody(err) };
    }
  }

  /** digest §5.3 step 3–4: verify the state, find the parked call, send the answers upstream. */
  async #resume(r: MrtrRequest): Promise<Found> {
    const verdict = this.#opts.codec.open(r.env.params.requestState, r.req.method, r.env.params, principalId(r.ctx.principal));
    if (!verdict.ok && verdict.reason === 'principal') {
      this.#opts.logger.warn('identity.foreign_state', { what: 'requestState', id: r.req.id, method: r.req.method, caller: principalId(r.ctx.principal) });
      return { error: { code: RpcCode.InvalidParams, message: verdict.message, data: { requestState: 'expired' } } };
    }
    if (!verdict.ok) {
      return { error: { code: RpcCode.InvalidParams, message: verdict.message, data: { requestState: verdict.reason } } };
    }
    const parked = this.#parked.take(verdict.ref);
    if (!parked) {
      const message = 'requestState expired: the call it names is no longer parked (it reached its time-to-live, was cancelled, or was already resumed); start the request again without it';
      return { error: { code: RpcCode.InvalidParams, message, data: { requestState: 'expired' } } };
    }
    if (parked instanceof UrlElicitationPending) return this.#afterUrlElicitation(r, parked);
    // What the last round asked travelled in the state (sealed, so as the bridge wrote it).
    parked.restore(verdict.extra?.[ASKED]);
    return { call: parked, answers: r.env.params.inputResponses ?? {} };
  }

  /** The retry of a `-32042` round: ask again for what is missing, stop on a refusal, else re-issue upstream. */
  async #afterUrlElicitation(r: MrtrRequest, pending: UrlElicitationPending): Promise<Found> {
    const { missing, refused } = pending.review(r.env.params.inputResponses);
    if (refused.length > 0) {
      return { error: { code: RpcCode.InternalError, message: `the server requires URL elicitation before ${r.req.method}, and the client did not accept it`, data: { declined: refused } } };
    }
    if (Object.keys(missing).length > 0) return { outcome: this.#inputRequired(r, new UrlElicitationPending(missing), missing) };
    return this.#begin(r);
  }

  #inputRequired(r: MrtrRequest, parked: Parked, inputRequests: Record<string, InputRequestEntry>): RpcOutcome {
    const max = this.#opts.maxParked ?? Number.POSITIVE_INFINITY;
    if (this.#parked.size >= max) {
      // A bound on what the bridge holds for clients that may never retry (digest §5.3 step 4).
      this.#opts.logger.warn('m2l.parked_limit', { id: r.req.id, method: r.req.method, maxParked: max });
      parked.cancel(`too many parked calls (${max}, --max-parked)`);
      return { error: { code: RpcCode.InternalError, message: 'too many parked calls (--max-parked)', data: { maxParkedCalls: max } } };
    }
    const owner = principalId(r.ctx.principal);
    const mine = this.#opts.maxParkedPerPrincipal;
    if (mine !== undefined && owner !== '' && this.#parked.countOwnedBy(owner) >= mine) {
      this.#opts.logger.warn('m2l.parked_limit', { id: r.req.id, method: r.req.method, principal: owner, maxParkedPerPrincipal: mine });
      parked.cancel(`too many parked calls for this principal (${mine}, --max-parked-per-principal)`);
      return { error: { code: RpcCode.InternalError, message: 'too many parked calls for this principal (--max-parked-per-principal)', data: { maxParkedPerPrincipal: mine } } };
    }
    const ref = this.#parked.park(parked, undefined, owner);
    // A parked MrtrCall keeps no copy of its round: the state carries it to the retry (issue 17).
    let extra: Record<string, unknown> | undefined;
    if (parked instanceof MrtrCall && JSON.stringify(inputRequests).length <= CARRY_MAX_CHARS) {
      extra = { [ASKED]: inputRequests };
      parked.dropAsked(Object.keys(inputRequests));
    }
    // Bound to the principal (spec: requestState SHOULD be): another user's retry finds nothing parked.
    const requestState = this.#opts.codec.seal(ref, r.req.method, r.env.params, extra, owner);
    this.#opts.logger.info('m2l.input_required', { id: r.req.id, method: r.req.method, keys: Object.keys(inputRequests) });
    return { result: { resultType: 'input_required', inputRequests, requestState, _meta: { [META.serverInfo]: this.#opts.serverInfo } } };
  }

  #conclude(r: MrtrRequest, call: MrtrCall, ended: LegOutcome): RpcOutcome {
    if (ended.kind === 'final') {
      const url = 'error' in ended.outcome ? urlElicitationRound(ended.outcome.error, r.env.clientCapabilities) : undefined;
      if (url?.kind === 'round') return this.#inputRequired(r, new UrlElicitationPending(url.inputRequests), url.inputRequests);
      if (url?.kind === 'error') return { error: url.error };
      return r.shape(ended.outcome);
    }
    if (ended.kind === 'input') return this.#inputRequired(r, call, ended.inputRequests);
    if (ended.kind === 'aborted') {
      call.cancel(ended.reason ?? 'the modern client cancelled the request');
      if (ended.reason !== undefined) return { error: { code: RpcCode.InternalError, message: `upstream ${r.req.method} abandoned: ${ended.reason}` } };
      return { error: { code: RpcCode.RequestCancelled, message: 'request cancelled by the client' } };
    }
    call.cancel(`timed out after ${ended.afterMs} ms`);
    return { error: { code: RpcCode.InternalError, message: `upstream ${r.req.method} timed out after ${ended.afterMs} ms`, data: { bridgeCode: 'BRIDGE_ERR_TIMEOUT' } } };
  }
}
