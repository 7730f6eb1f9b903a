import { describe, expect, it } from 'vitest';
import { runInputRounds, type InputRoundsOptions } from '../../bridges/legacy-to-modern/input-rounds.js';
import { SessionState } from '../../bridges/legacy-to-modern/session-state.js';
import type { LegacyRequestContext } from '../../src/contracts/downstream.js';
import type { CallHandlers, ModernLink, OutboundRequest } from '../../src/contracts/upstream.js';
import { RpcError } from '../../src/errors.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import { silentLogger } from '../../src/log.js';

type Obj = Record<string, unknown>;

/** A ModernLink that answers from a script, one entry per call, and records what it was sent. */
class ScriptedLink implements ModernLink {
  readonly kind = 'http' as const;
  readonly sent: { req: OutboundRequest; handlers: CallHandlers }[] = [];
  constructor(private readonly script: ((req: OutboundRequest) => RpcOutcome)[]) {}
  async call(req: OutboundRequest, handlers: CallHandlers = {}): Promise<RpcOutcome> {
    this.sent.push({ req, handlers });
    const step = this.script[this.sent.length - 1];
    if (!step) throw new Error(`unscripted call #${this.sent.length}`);
    return step(req);
  }
  async close(): Promise<void> {}
}

interface Asked {
  method: string;
  params: Obj | undefined;
  signal?: AbortSignal;
  timeoutMs?: number;
}

function context(answer: (a: Asked) => Promise<Obj>, signal = new AbortController().signal) {
  const asked: Asked[] = [];
  const notified: unknown[] = [];
  const ctx = {
    session: {} as never,
    signal,
    notify: (n: unknown) => (notified.push(n), true),
    request: (method: string, params: Obj | undefined, opts?: { signal?: AbortSignal; timeoutMs?: number }) => {
      const a = { method, params, ...opts };
      asked.push(a);
      return answer(a);
    },
  } as unknown as LegacyRequestContext;
  return { ctx, asked, notified };
}

const identity = (version: string, caps: Obj = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} }) =>
  new SessionState({ protocolVersion: version, clientInfo: { name: 'c', version: '1' }, clientCapabilities: caps });

const opts = (link: ModernLink, over: Partial<InputRoundsOptions> = {}): InputRoundsOptions => ({
  link,
  logger: silentLogger,
  callTimeoutMs: 1_000,
  maxInputRounds: 3,
  inputTimeoutMs: 500,
  stateOnlyPauseMs: 40,
  ...over,
});

const elicit = (message: string) => ({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} } } });
const done = (text: string): RpcOutcome => ({ result: { resultType: 'complete', content: [{ type: 'text', text }] } });

describe('runInputRounds', () => {
  it('asks every input at once, then retries with the same params, inputResponses and the byte-exact requestState', async () => {
    const state = ' sealed\u00e9/+= \n';
    const link = new ScriptedLink([
      () => ({ result: { resultType: 'input_required', inputRequests: { a: elicit('A?'), b: { method: 'roots/list' } }, requestState: state } }),
      () => done('ok'),
    ]);
    let open = 0;
    let maxOpen = 0;
    const { ctx, asked } = context(async (a) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      await new Promise((r) => setTimeout(r, 20));
      open--;
      return a.method === 'roots/list' ? { roots: [], _meta: { x: 1 } } : { action: 'accept', content: { v: 1 }, resultType: 'complete' };
    });
    const out = await runInputRounds({ method: 'tools/call', params: { name: 't', arguments: { q: 1 } }, state: identity('2025-11-25'), ctx, signal: ctx.signal }, opts(link));
    expect(out).toEqual({ result: { content: [{ type: 'text', text: 'ok' }] } });
    expect(maxOpen).toBe(2);
    expect(asked.map((a) => a.method)).toEqual(['elicitation/create', 'roots/list']);
    expect(asked[0].timeoutMs).toBe(500);
    const [first, retry] = link.sent.map((s) => s.req);
    expect(first.id).toBeUndefined();
    expect(retry.id).toBeUndefined();
    expect(retry.params).toEqual({ ...first.params, inputResponses: { a: { action: 'accept', content: { v: 1 } }, b: { roots: [] } }, requestState: state });
    expect(retry.params!.requestState).toBe(state);
    expect(first.params!._meta).toMatchObject({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
  });

  it('retries a requestState-only round after the pause, with no inputResponses', async () => {
    const link = new ScriptedLink([() => ({ result: { resultType: 'input_required', requestState: 's1' } }), () => done('later')]);
    const { ctx, asked } = context(async () => ({}));
    const started = Date.now();
    const out = await runInputRounds({ method: 'prompts/get', params: { name: 'p' }, state: identity('2025-06-18'), ctx, signal: ctx.signal }, opts(link));
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect(out).toEqual({ result: { content: [{ type: 'text', text: 'later' }] } });
    expect(asked).toEqual([]);
    expect(link.sent[1].req.params).toEqual({ ...link.sent[0].req.params, requestState: 's1' });
  });

  it('gives up with a clear error after maxInputRounds rounds', async () => {
    const again = (): RpcOutcome => ({ result: { resultType: 'input_required', inputRequests: { a: elicit('again?') } } });
    const link = new ScriptedLink([again, again, again, again]);
    const { ctx, asked } = context(async () => ({ action: 'accept', content: {} }));
    const out = await runInputRounds({ method: 'tools/call', params: { name: 't' }, state: identity('2025-06-18'), ctx, signal: ctx.signal }, opts(link, { maxInputRounds: 3 }));
    expect(out).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/after 3 rounds/) } });
    expect(link.sent).toHaveLength(4);
    expect(asked).toHaveLength(3);
  });

  const gaps: [string, string, Obj, RegExp][] = [
    ['2025-03-26', 'tools/call', {}, /2025-03-26 client cannot answer elicitation\/create/],
    ['2024-11-05', 'tools/call', {}, /2024-11-05 client cannot answer elicitation\/create/],
  ];
  for (const [version, method, caps, why] of gaps) {
    it(`a ${version} client asked to elicit on ${method} gets an isError result and is never asked`, async () => {
      const link = new ScriptedLink([() => ({ result: { resultType: 'input_required', inputRequests: { a: elicit('x') } } })]);
      const { ctx, asked } = context(async () => ({}));
      const out = await runInputRounds({ method, params: {}, state: identity(version, caps), ctx, signal: ctx.signal }, opts(link));
      expect(out).toMatchObject({ result: { isError: true, content: [{ type: 'text', text: expect.stringMatching(why) }] } });
      expect(asked).toEqual([]);
    });
  }

  it('a url elicitation toward 2025-06-18 on resources/read is a -32603', async () => {
    const link = new ScriptedLink([() => ({ result: { resultType: 'input_required', inputRequests: { u: { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x' } } } } })]);
    const { ctx } = context(async () => ({}));
    const out = await runInputRounds({ method: 'resources/read', params: { uri: 'a://b' }, state: identity('2025-06-18'), ctx, signal: ctx.signal }, opts(link));
    expect(out).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/url-mode elicitation/) } });
  });

  it('a url elicitation toward 2025-11-25 carries a synthesized elicitationId, completed once the retry succeeds', async () => {
    const link = new ScriptedLink([
      () => ({ result: { resultType: 'input_required', inputRequests: { u: { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x' } } } } }),
      () => done('signed in'),
    ]);
    const { ctx, asked, notified } = context(async () => ({ action: 'accept' }));
    await runInputRounds({ method: 'tools/call', params: {}, state: identity('2025-11-25'), ctx, signal: ctx.signal }, opts(link));
    const id = asked[0].params!.elicitationId;
    expect(typeof id).toBe('string');
    expect(link.sent[1].req.params!.inputResponses).toEqual({ u: { action: 'accept' } });
    expect(notified).toEqual([{ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId: id } }]);
  });

  it('a client that fails one input fails the request, and the other pending input is abandoned', async () => {
    const link = new ScriptedLink([() => ({ result: { resultType: 'input_required', inputRequests: { a: elicit('A'), b: { method: 'roots/list' } } } })]);
    let abandoned = false;
    const { ctx } = context((a) => {
      if (a.method === 'elicitation/create') return Promise.reject(new RpcError(-32603, 'elicitation/create not answered within 500 ms'));
      return new Promise((_, reject) => a.signal!.addEventListener('abort', () => ((abandoned = true), reject(new Error('aborted')))));
    });
    const out = await runInputRounds({ method: 'tools/call', params: {}, state: identity('2025-11-25'), ctx, signal: ctx.signal }, opts(link));
    expect(out).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/input "a" \(elicitation\/create\): elicitation\/create not answered within 500 ms/) } });
    expect(abandoned).toBe(true);
    expect(link.sent).toHaveLength(1);
  });

  it('input_required on a method that may not return it is an error', async () => {
    const link = new ScriptedLink([() => ({ result: { resultType: 'input_required', requestState: 'x' } })]);
    const { ctx } = context(async () => ({}));
    const out = await runInputRounds({ method: 'tools/list', params: {}, state: identity('2025-11-25'), ctx, signal: ctx.signal }, opts(link));
    expect(out).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/only tools\/call, prompts\/get and resources\/read/) } });
  });

  it('passes the cancel signal, the leg deadline and call notifications through', async () => {
    const ac = new AbortController();
    const link = new ScriptedLink([
      () => {
        link.sent[0].handlers.onNotification!({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
        return done('x');
      },
    ]);
    const { ctx, notified } = context(async () => ({}), ac.signal);
    await runInputRounds({ method: 'tools/call', params: {}, state: identity('2025-11-25'), ctx, signal: ac.signal }, opts(link));
    expect(link.sent[0].handlers.signal).toBe(ac.signal);
    expect(link.sent[0].handlers.timeoutMs).toBe(1_000);
    expect(notified).toEqual([{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }]);
  });
});
