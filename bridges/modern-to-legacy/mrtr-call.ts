import type { JSONRPCNotification, JSONRPCRequest, RequestId } from '@modelcontextprotocol/server';
import type { LegacyUpstreamSession } from '../../src/contracts/upstream.js';
import { RpcError } from '../../src/errors.js';
import { RpcCode } from '../../src/jsonrpc/codes.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import type { SessionLease } from '../../src/links/session-pool.js';
import type { Logger } from '../../src/log.js';
import { declaresInputCapability, isEmbeddableInputMethod } from '../shared/capabilities-to-legacy.js';
import { undeclaredInput } from './undeclared-input.js';
import type { Parkable } from '../shared/parked-calls.js';
import { LOG_SLOT, type LogRelay, type LogSubscriber } from './log-relay.js';
import { LIVE_SLOT } from '../../src/heap/live-set.js';
import { ProgressRelay, type LegSink } from './progress-relay.js';
import { IdTable } from '../../src/heap/id-table.js';

/**
 * One upstream call that may stop for input, across the modern legs (first
 * request and MRTR retries) that drive it (digest §5.3 case A). While a leg is
 * attached, server→client requests are gathered into a round that ends the
 * leg with `input_required`; the upstream call itself stays open (and keeps
 * its lease) until it completes, is cancelled, or its parking expires.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The link must not time the call out: legs are timed here, parking by its TTL. setTimeout's maximum. */
const LINK_DEADLINE_OFF_MS = 2 ** 31 - 1;

/** One modern leg: its stream, its cancellation and this request's declared capabilities. */
export interface Leg extends LegSink {
  signal: AbortSignal;
  clientCapabilities: Obj;
}

/** An embedded input request (digest §1.7: bare method + params). */
export interface InputRequestEntry {
  method: string;
  params?: Obj;
}

export type LegOutcome =
  | { kind: 'final'; outcome: RpcOutcome }
  | { kind: 'input'; inputRequests: Record<string, InputRequestEntry> }
  /** The client went away (no reason), or the bridge gave the call up (`reason`). */
  | { kind: 'aborted'; reason?: string }
  | { kind: 'timeout'; afterMs: number };

interface PendingInput {
  serverRequestId: string;
  /**
   * The embedded request. Once a round has asked it, it usually travels in
   * the sealed requestState instead (mrtr-rounds.ts drops it here with
   * `dropAsked`) and comes back with the retry through `restore`, so a parked
   * call holds no copy of what the server asked (issue 17: a parked call's
   * memory). A round too large to carry stays here.
   */
  entry: InputRequestEntry | undefined;
  /** 2025-11-25 url elicitation: removed from the embedded request (2026 has none), kept for logs. */
  elicitationId?: string;
  resolve(result: Obj): void;
  reject(err: RpcError): void;
}

export interface MrtrCallOptions {
  lease: SessionLease;
  method: string;
  /** Already stripped of the envelope and retry fields. */
  params: Obj | undefined;
  originalProgressToken?: RequestId;
  logRelay: LogRelay;
  logger: Logger;
  /** Active time one leg may wait (parked time does not count). */
  legTimeoutMs: number;
  /** Server requests arriving within this many ms of each other share a round. */
  gatherMs: number;
}

const KEY_PREFIX: Record<string, string> = { 'elicitation/create': 'elicit', 'sampling/createMessage': 'sample', 'roots/list': 'roots' };


/** A call's slot in MrtrRounds' set of calls running a leg now. */
export const RUNNING_SLOT: unique symbol = Symbol('mcp-bridge.runningSlot');

export class MrtrCall implements Parkable, LogSubscriber {
  [LOG_SLOT] = -1;
  /** Slots in MrtrRounds' sets of live and of running calls (live-set.ts). */
  [LIVE_SLOT] = -1;
  [RUNNING_SLOT] = -1;
  readonly session: LegacyUpstreamSession;
  readonly progress: ProgressRelay;
  readonly #opts: MrtrCallOptions;
  readonly #pending = new IdTable<string, PendingInput>();
  readonly #abort = new AbortController();
  #keys = 0;
  #started = false;
  #final: RpcOutcome | undefined;
  #caps: Obj = {};
  #leg: { leg: Leg; settle(o: LegOutcome): void } | undefined;
  #gather: { timer: NodeJS.Timeout; since: number } | undefined;
  #untrack: () => void = () => undefined;
  #released = false;

  constructor(opts: MrtrCallOptions) {
    this.#opts = opts;
    this.session = opts.lease.session;
    this.progress = new ProgressRelay(opts.originalProgressToken);
  }

  get finished(): boolean {
    return this.#final !== undefined;
  }

  /** True while the upstream call runs and holds its lease (attached to a leg or parked). */
  get live(): boolean {
    return this.#started && !this.#released;
  }

  /**
   * A server request the link could not tie to any call (a GET stream, digest
   * §5.3 step 8) that the bridge attributes to this call, the only one live on
   * its session.
   */
  adopt(req: JSONRPCRequest): Promise<Obj> {
    return this.#onServerRequest(req);
  }

  current(): LegSink | undefined {
    return this.#leg?.leg;
  }

  /**
   * Attaches a leg, then sends the retry's `inputResponses` (if any) upstream,
   * and waits for what ends the leg: the final result, a round of input
   * requests, abort or timeout. Answering only once attached means nothing the
   * server sends in reply (progress, messages) can fall between two legs.
   */
  runLeg(leg: Leg, inputResponses?: unknown): Promise<LegOutcome> {
    this.#caps = leg.clientCapabilities;
    if (this.#final) return Promise.resolve({ kind: 'final', outcome: this.#final });
    if (leg.signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise<LegOutcome>((resolve) => {
      const onAbort = () => settle({ kind: 'aborted' });
      const afterMs = Math.min(this.#opts.legTimeoutMs, LINK_DEADLINE_OFF_MS);
      const timer = setTimeout(() => settle({ kind: 'timeout', afterMs }), afterMs);
      const settle = (o: LegOutcome) => {
        if (this.#leg?.settle !== settle) return;
        this.#leg = undefined;
        this.progress.detach();
        this.#clearGather();
        clearTimeout(timer);
        leg.signal.removeEventListener('abort', onAbort);
        resolve(o);
      };
      this.#leg = { leg, settle };
      this.progress.attach(leg);
      leg.signal.addEventListener('abort', onAbort, { once: true });
      if (!this.#started) this.#start();
      if (inputResponses !== undefined) this.#answer(inputResponses);
      // A retry that left keys unanswered gets them asked again (digest §1.7: missing inputs → input_required).
      if (this.#pending.size > 0) this.#scheduleRound();
    });
  }

  /** Sends each pending request's answer upstream; keys without an object answer stay pending, unknown keys are ignored. */
  #answer(inputResponses: unknown): void {
    const given = isObj(inputResponses) ? inputResponses : {};
    for (const [key, p] of [...this.#pending]) {
      const r = given[key];
      if (!isObj(r)) continue;
      this.#pending.delete(key);
      const { resultType: _noise, ...result } = r;
      p.resolve(result);
    }
  }

  /** Cancels upstream (the link sends notifications/cancelled) and frees the lease. Idempotent. */
  cancel(reason: string): void {
    if (!this.#final) {
      this.#opts.logger.info('m2l.call_cancelled', { method: this.#opts.method, session: this.session.id, reason });
      this.#abort.abort(reason);
    }
    this.#leg?.settle({ kind: 'aborted', reason });
    this.#release();
  }

  #start(): void {
    this.#started = true;
    this.#untrack = this.#opts.logRelay.track(this.session, this);
    void this.session
      .call(
        { method: this.#opts.method, params: this.#opts.params },
        {
          onServerRequest: (req) => this.#onServerRequest(req),
          onNotification: (n) => this.#onNotification(n),
          signal: this.#abort.signal,
          timeoutMs: LINK_DEADLINE_OFF_MS,
        },
      )
      .then((outcome) => this.#finish(outcome));
  }

  #finish(outcome: RpcOutcome): void {
    // A call the bridge gave up (an undeclared input) keeps the answer it was given up with.
    this.#final ??= outcome;
    outcome = this.#final;
    this.#clearGather();
    for (const p of this.#pending.values()) p.reject(new RpcError(RpcCode.InternalError, 'the call this request belonged to has ended'));
    this.#pending.clear();
    this.#release();
    this.#leg?.settle({ kind: 'final', outcome });
  }

  #release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#untrack();
    this.#opts.lease.release();
  }

  #onServerRequest(req: JSONRPCRequest): Promise<Obj> {
    if (this.#final) return Promise.reject(new RpcError(RpcCode.InternalError, 'the call this request belongs to has ended'));
    if (!isEmbeddableInputMethod(req.method)) {
      this.#opts.logger.info('m2l.input_refused', { method: req.method, call: this.#opts.method });
      return Promise.reject(new RpcError(RpcCode.MethodNotFound, `the modern client cannot answer ${req.method}`));
    }
    if (!declaresInputCapability(this.#caps, req)) return this.#refuseUndeclared(req);
    const key = `${KEY_PREFIX[req.method]}-${++this.#keys}`;
    const params = isObj(req.params) ? { ...(req.params as Obj) } : undefined;
    let elicitationId: string | undefined;
    // digest §5.3 step 2: a 2025-11-25 url elicitation loses its elicitationId (2026 has none).
    if (req.method === 'elicitation/create' && params?.mode === 'url' && 'elicitationId' in params) {
      elicitationId = String(params.elicitationId);
      delete params.elicitationId;
    }
    const entry: InputRequestEntry = params === undefined ? { method: req.method } : { method: req.method, params };
    return new Promise<Obj>((resolve, reject) => {
      this.#pending.set(key, { serverRequestId: String(req.id), entry, elicitationId, resolve, reject });
      this.#scheduleRound();
    });
  }

  /** An undeclared input (undeclared-input.ts): the call ends with -32021; the server's request is answered before the cancel. */
  #refuseUndeclared(req: JSONRPCRequest): Promise<Obj> {
    const { outcome, serverError, requiredCapabilities } = undeclaredInput(req, this.#opts.method);
    this.#opts.logger.info('m2l.input_undeclared', { method: req.method, call: this.#opts.method, requiredCapabilities });
    this.#final = outcome;
    this.#clearGather();
    for (const p of this.#pending.values()) p.reject(new RpcError(RpcCode.InternalError, 'the call this request belonged to has ended'));
    this.#pending.clear();
    this.#leg?.settle({ kind: 'final', outcome });
    setImmediate(() => {
      this.#abort.abort('an input the modern request did not declare');
      this.#release();
    });
    return Promise.reject(serverError);
  }

  #onNotification(n: JSONRPCNotification): void {
    const params = (n.params ?? {}) as Obj;
    if (n.method === 'notifications/progress') {
      this.progress.forward(n);
    } else if (n.method === 'notifications/message') {
      this.#opts.logRelay.deliver(this, n);
    } else if (n.method === 'notifications/cancelled') {
      // digest §5.3 step 6: the server gave up its own request; drop its key.
      for (const [key, p] of this.#pending) {
        if (p.serverRequestId === String(params.requestId)) {
          this.#pending.delete(key);
          p.reject(new RpcError(RpcCode.RequestCancelled, 'cancelled by the server'));
        }
      }
    } else {
      this.#opts.logger.debug('m2l.call_notification_dropped', { method: n.method, call: this.#opts.method });
    }
  }

  /** Debounce: a round goes out `gatherMs` after the last arrival, at most 10× `gatherMs` after the first. */
  #scheduleRound(): void {
    if (!this.#leg) return;
    const now = Date.now();
    const since = this.#gather?.since ?? now;
    if (this.#gather) clearTimeout(this.#gather.timer);
    const wait = Math.max(0, Math.min(this.#opts.gatherMs, since + this.#opts.gatherMs * 10 - now));
    this.#gather = { since, timer: setTimeout(() => this.#endRound(), wait) };
  }

  #clearGather(): void {
    if (this.#gather) clearTimeout(this.#gather.timer);
    this.#gather = undefined;
  }

  #endRound(): void {
    this.#gather = undefined;
    if (!this.#leg || this.#pending.size === 0) return;
    const inputRequests: Record<string, InputRequestEntry> = {};
    for (const [key, p] of [...this.#pending]) {
      if (p.entry === undefined) {
        // Its only copy was in a state the retry did not bring back: it cannot be asked again.
        this.#pending.delete(key);
        p.reject(new RpcError(RpcCode.InternalError, 'the bridge no longer holds this request to ask the client again'));
        continue;
      }
      inputRequests[key] = p.entry;
    }
    if (Object.keys(inputRequests).length === 0) return;
    this.#leg.settle({ kind: 'input', inputRequests });
  }

  /** Forgets the embedded requests of `keys`: the round's requestState carries them to the retry. */
  dropAsked(keys: Iterable<string>): void {
    for (const key of keys) {
      const p = this.#pending.get(key);
      if (p) p.entry = undefined;
    }
  }

  /**
   * Gives back the embedded requests a round asked, from the retry's verified
   * requestState, to the keys still pending (a key answered or cancelled
   * meanwhile stays gone). Call before `runLeg`.
   */
  restore(asked: unknown): void {
    if (!isObj(asked)) return;
    for (const [key, p] of this.#pending) {
      const entry = asked[key];
      if (p.entry === undefined && isObj(entry) && typeof entry.method === 'string') p.entry = entry as unknown as InputRequestEntry;
    }
  }
}
