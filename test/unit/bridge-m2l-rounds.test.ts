import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../helpers/wait-for.js';
import { ScriptedLink, serverIds, type Obj, type Script, type ScriptedSession } from './bridge-m2l-scripted.js';

/**
 * MRTR mechanics against a scripted in-memory legacy session (an
 * implementation of our own LegacyUpstreamSession contract, so every timing
 * is under the test's control): gathering, partial answers, refusals, url
 * elicitation, server-side cancel, TTL, timeouts, progress across legs.
 */

const facts: UpstreamFacts = {
  epoch: 'initialize',
  transport: 'stdio',
  protocolVersion: '2025-11-25',
  capabilities: { tools: {}, logging: {} },
  serverInfo: { name: 'scripted', version: '1' },
};

const open: Array<{ bridge: ModernToLegacyBridge; pool: SessionPool }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bridge.close();
    await o.pool.close();
  }
});

/** The bridge's gathering window, set explicitly where a test orders a timer of its own after it. */
const GATHER_MS = 10;

function setup(scripts: Record<string, Script>, opts: { ttlMs?: number; callTimeoutMs?: number; correlates?: boolean } = {}) {
  const link = new ScriptedLink(scripts, opts.correlates);
  const pool = new SessionPool(link, { max: 4, idleMs: 60_000, logger: silentLogger });
  const bridge = new ModernToLegacyBridge({ pool, facts, logger: silentLogger, callTimeoutMs: opts.callTimeoutMs ?? 5_000, requestStateTtlMs: opts.ttlMs ?? 60_000, instanceId: 'unit', gatherMs: GATHER_MS });
  open.push({ bridge, pool });
  return { bridge, pool, link };
}

let ids = 1;
function call(name: string, caps: Obj = {}, meta: Obj = {}, method = 'tools/call'): JSONRPCRequest {
  return {
    jsonrpc: '2.0',
    id: ids++,
    method,
    params: {
      name,
      arguments: {},
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': caps, ...meta },
    },
  } as JSONRPCRequest;
}

function retry(req: JSONRPCRequest, first: Obj, inputResponses: Obj, meta: Obj = {}): JSONRPCRequest {
  const params = req.params as Obj;
  return { ...req, id: ids++, params: { ...params, _meta: { ...(params._meta as Obj), ...meta }, inputResponses, requestState: first.requestState } } as JSONRPCRequest;
}

function ctx() {
  const ac = new AbortController();
  const notes: JSONRPCNotification[] = [];
  const c: ModernRequestContext = { signal: ac.signal, notify: (n) => notes.push(n), transport: 'stdio' };
  return { ctx: c, notes, abort: () => ac.abort() };
}

function result(res: JSONRPCResponse): Obj {
  if ('error' in res) throw new Error(JSON.stringify(res.error));
  return res.result as Obj;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise the test resolves: lets a script wait for a point in the test instead of for time. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** The upstream tools/call of a scripted session, once it has been made. */
const upstreamCall = (link: ScriptedLink, i = 0) => link.sessions[0]?.calls.filter((c) => c.req.method === 'tools/call')[i];
const form = { message: 'name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } };
const allCaps = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

describe('MRTR rounds (modern-to-legacy)', () => {
  it('server requests arriving together share one round; answers reach the server and the same call completes', async () => {
    const { bridge, link } = setup({
      'tools/call': async (u) => {
        const [a, b] = await Promise.all([u.ask('elicitation/create', form), u.ask('roots/list')]);
        return { result: { content: [{ type: 'text', text: JSON.stringify({ a, b }) }] } };
      },
    });
    const req = call('t', allCaps);
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests).toEqual({ 'elicit-1': { method: 'elicitation/create', params: form }, 'roots-2': { method: 'roots/list' } });
    const done = result(await bridge.handle(retry(req, first, { 'elicit-1': { action: 'accept', content: { n: 'x' } }, 'roots-2': { roots: [] }, extra: { ignored: true } }), ctx().ctx));
    expect(done.resultType).toBe('complete');
    expect(JSON.parse((done.content as Array<{ text: string }>)[0].text)).toEqual({ a: { action: 'accept', content: { n: 'x' } }, b: { roots: [] } });
    expect(link.sessions[0].calls.filter((c) => c.req.method === 'tools/call')).toHaveLength(1);
  });

  it('a retry missing a key gets input_required again for that key only', async () => {
    const { bridge } = setup({
      'tools/call': async (u) => {
        const answers = await Promise.all([u.ask('elicitation/create', form), u.ask('sampling/createMessage', { messages: [], maxTokens: 1 })]);
        return { result: { answers } };
      },
    });
    const req = call('t', allCaps);
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(Object.keys(first.inputRequests as Obj)).toEqual(['elicit-1', 'sample-2']);
    const second = result(await bridge.handle(retry(req, first, { 'elicit-1': { action: 'decline' } }), ctx().ctx));
    expect(second.resultType).toBe('input_required');
    expect(Object.keys(second.inputRequests as Obj)).toEqual(['sample-2']);
    expect(second.requestState).not.toBe(first.requestState);
    const done = result(await bridge.handle(retry(req, second, { 'sample-2': { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' } }), ctx().ctx));
    expect(done.answers).toEqual([{ action: 'decline' }, { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }]);
  });

  it.each([
    ['a small round travels in the requestState', 10, true],
    ['a round too large to carry (64 KiB) stays on the parked call', 70_000, false],
  ])('%s; a retry that leaves the key unanswered is asked the same request again', async (_name, size, carried) => {
    const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(size) } }], maxTokens: 1 };
    const { bridge } = setup({ 'tools/call': async (u) => ({ result: { answer: await u.ask('sampling/createMessage', sampling) } }) });
    const req = call('t', allCaps);
    const first = result(await bridge.handle(req, ctx().ctx));
    const sealed = JSON.parse(Buffer.from(String(first.requestState).split('.')[1], 'base64url').toString('utf8')) as { e?: { q?: Obj } };
    expect(sealed.e?.q).toEqual(carried ? first.inputRequests : undefined);
    const again = result(await bridge.handle(retry(req, first, {}), ctx().ctx));
    expect(again.inputRequests).toEqual({ 'sample-1': { method: 'sampling/createMessage', params: sampling } });
    const answer = { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' };
    expect(result(await bridge.handle(retry(req, again, { 'sample-1': answer }), ctx().ctx)).answer).toEqual(answer);
  });

  it.each([
    ['elicitation (form)', 'elicitation/create', form, { roots: {} }, { elicitation: {} }],
    ['elicitation (url)', 'elicitation/create', { mode: 'url', message: 'open', url: 'https://x.test/a', elicitationId: 'e' }, { elicitation: {} }, { elicitation: { url: {} } }],
    ['sampling', 'sampling/createMessage', { messages: [], maxTokens: 1 }, { roots: {} }, { sampling: {} }],
    ['sampling with tools', 'sampling/createMessage', { messages: [], maxTokens: 1, tools: [] }, { sampling: {} }, { sampling: { tools: {} } }],
    ['roots', 'roots/list', undefined, { sampling: {} }, { roots: {} }],
  ])('an undeclared %s input: -32021 naming just that capability, the server request refused, the call cancelled upstream', async (_name, method, params, caps, required) => {
    let asked: unknown;
    const { bridge, link } = setup({
      'tools/call': async (u) => {
        asked = await u.ask(method, params as Obj | undefined);
        return { result: { content: [] } };
      },
    });
    const res = await bridge.handle(call('t', caps), ctx().ctx);
    expect('error' in res && res.error).toEqual({ code: -32021, message: expect.stringContaining(method), data: { requiredCapabilities: required } });
    // The server's request is answered first, then the call is cancelled.
    expect(((await waitFor(() => asked)) as { error: { code: number } }).error.code).toBe(-32601);
    await waitFor(() => upstreamCall(link)?.cancelled || undefined);
    expect(bridge.stats().parked).toBe(0);
  });

  it('an undeclared input arriving while the call is parked ends it: the retry gets -32021', async () => {
    const parked = gate();
    const { bridge, link } = setup({
      'tools/call': async (u) => {
        void u.ask('elicitation/create', form);
        await parked.opened;
        await u.ask('sampling/createMessage', { messages: [], maxTokens: 1 });
        return { result: { content: [] } };
      },
    });
    const req = call('t', { elicitation: {} });
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(Object.keys(first.inputRequests as Obj)).toEqual(['elicit-1']);
    parked.open();
    await waitFor(() => upstreamCall(link)?.cancelled || undefined);
    const res = await bridge.handle(retry(req, first, { 'elicit-1': { action: 'accept', content: { n: 'x' } } }), ctx().ctx);
    expect('error' in res && res.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });

  it('a server request that is no input method is refused upstream with -32601 and the call goes on', async () => {
    const { bridge } = setup({ 'tools/call': async (u) => ({ result: { task: await u.ask('tasks/get', { taskId: 'x' }) } }) });
    const done = result(await bridge.handle(call('t', allCaps), ctx().ctx));
    expect(done.resultType).toBe('complete');
    expect((done.task as { error: { code: number } }).error.code).toBe(-32601);
  });

  it('a url elicitation loses its elicitationId when embedded', async () => {
    const { bridge } = setup({ 'tools/call': async (u) => ({ result: { r: await u.ask('elicitation/create', { mode: 'url', message: 'open', url: 'https://x.test/a', elicitationId: 'el-9' }) } }) });
    const req = call('t', { elicitation: { url: {} } });
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(first.inputRequests).toEqual({ 'elicit-1': { method: 'elicitation/create', params: { mode: 'url', message: 'open', url: 'https://x.test/a' } } });
    expect(result(await bridge.handle(retry(req, first, { 'elicit-1': { action: 'accept' } }), ctx().ctx)).r).toEqual({ action: 'accept' });
  });

  it('a server that cancels its own request drops that key from the next round', async () => {
    const roundOut = gate();
    let roots: Obj | { error: unknown } | undefined;
    const { bridge } = setup({
      'tools/call': async (u) => {
        const first = u.ask('elicitation/create', form);
        const asked = u.ask('roots/list');
        await roundOut.opened;
        u.notify('notifications/cancelled', { requestId: serverIds.next - 1 });
        roots = await asked;
        const answer = await first;
        // Had roots-2 stayed pending, the retry would have armed a round for it GATHER_MS ago; Node runs
        // timers in the order they fall due, so that round would go out before this result.
        await sleep(GATHER_MS * 4);
        return { result: { first: answer } };
      },
    });
    const req = call('t', allCaps);
    const r1 = result(await bridge.handle(req, ctx().ctx));
    expect(Object.keys(r1.inputRequests as Obj)).toEqual(['elicit-1', 'roots-2']);
    roundOut.open();
    // The bridge answered the server's own cancellation by dropping the key: its request ended -32800.
    expect(await waitFor(() => roots)).toMatchObject({ error: { code: -32800 } });
    const done = result(await bridge.handle(retry(req, r1, { 'elicit-1': { action: 'cancel' } }), ctx().ctx));
    expect(done).toMatchObject({ resultType: 'complete', first: { action: 'cancel' } });
  });

  it('a parked call past its TTL is cancelled upstream (its signal aborts) and the lease is released', async () => {
    const { bridge, pool, link } = setup({ 'tools/call': async (u) => ({ result: { r: await u.ask('elicitation/create', form) } }) }, { ttlMs: 50 });
    const first = result(await bridge.handle(call('t', allCaps), ctx().ctx));
    expect(first.resultType).toBe('input_required');
    expect(pool.stats().leased).toBe(1);
    await waitFor(() => upstreamCall(link)?.cancelled || undefined);
    await waitFor(() => (pool.stats().leased === 0 ? true : undefined));
    expect(bridge.stats().parked).toBe(0);
  });

  it('a final result that arrives while parked is what the retry returns', async () => {
    const parked = gate();
    const { bridge, pool } = setup({
      'tools/call': async (u) => {
        void u.ask('elicitation/create', form);
        await parked.opened;
        return { result: { early: true } };
      },
    });
    const req = call('t', allCaps);
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(first.resultType).toBe('input_required');
    parked.open();
    // The finished call gives its session back while it waits for the retry.
    await waitFor(() => (pool.stats().leased === 0 ? true : undefined));
    expect(result(await bridge.handle(retry(req, first, {}), ctx().ctx))).toMatchObject({ resultType: 'complete', early: true });
  });

  it('a leg that waits longer than callTimeoutMs is answered -32603 and cancelled upstream', async () => {
    const { bridge, link } = setup({ 'tools/call': () => new Promise(() => undefined) }, { callTimeoutMs: 50 });
    const res = await bridge.handle(call('t', allCaps), ctx().ctx);
    expect('error' in res && res.error).toMatchObject({ code: -32603, message: 'upstream tools/call timed out after 50 ms' });
    expect(link.sessions[0].calls[0].cancelled).toBe(true);
  });

  it('progress of one upstream call continues on the retry’s stream under the retry’s token', async () => {
    const { bridge } = setup({
      'tools/call': async (u) => {
        u.notify('notifications/progress', { progressToken: 'orig', progress: 1 });
        const r = await u.ask('elicitation/create', form);
        u.notify('notifications/progress', { progressToken: 'orig', progress: 2 });
        return { result: { r } };
      },
    });
    const req = call('t', allCaps, { progressToken: 'leg-1' });
    const leg1 = ctx();
    const first = result(await bridge.handle(req, leg1.ctx));
    const leg2 = ctx();
    await bridge.handle(retry(req, first, { 'elicit-1': { action: 'decline' } }, { progressToken: 'leg-2' }), leg2.ctx);
    expect(leg1.notes.map((n) => n.params)).toEqual([{ progressToken: 'leg-1', progress: 1 }]);
    expect(leg2.notes.map((n) => n.params)).toEqual([{ progressToken: 'leg-2', progress: 2 }]);
  });

  it('an unsolicited server request is adopted by the one live call on that session', async () => {
    let session: ScriptedSession | undefined;
    const { bridge, link } = setup({
      'tools/call': async () => {
        session = link.sessions[0];
        // Arrives on the session's unsolicited channel (a GET stream), not on the call.
        const answer = await session.unsolicited!.request({ jsonrpc: '2.0', id: 99, method: 'roots/list' } as JSONRPCRequest);
        return { result: { answer } };
      },
    }, { correlates: true });
    const req = call('t', { roots: {} });
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(first.inputRequests).toEqual({ 'roots-1': { method: 'roots/list' } });
    expect(result(await bridge.handle(retry(req, first, { 'roots-1': { roots: [{ uri: 'file:///a' }] } }), ctx().ctx)).answer).toEqual({ roots: [{ uri: 'file:///a' }] });
  });

  it('an unsolicited server request with no live call is refused', async () => {
    const { bridge, link } = setup({});
    await bridge.handle(call('x', {}, {}, 'tools/list'), ctx().ctx);
    await expect(link.sessions[0].unsolicited!.request({ jsonrpc: '2.0', id: 5, method: 'roots/list' } as JSONRPCRequest)).rejects.toMatchObject({ code: -32601 });
  });

  it('resources/read: -32002 becomes -32602 with data.uri', async () => {
    const { bridge } = setup({ 'resources/read': async () => ({ error: { code: -32002, message: 'Resource not found' } }) });
    const req = { ...call('', {}, {}, 'resources/read'), params: { uri: 'x://missing', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } } as JSONRPCRequest;
    const res = await bridge.handle(req, ctx().ctx);
    expect('error' in res && res.error).toEqual({ code: -32602, message: 'Resource not found', data: { uri: 'x://missing' } });
  });

  it('logging/setLevel is raised to the most verbose level in use, never lowered', async () => {
    const { bridge, link } = setup({});
    for (const level of ['error', 'debug', 'info']) await bridge.handle(call('', {}, { 'io.modelcontextprotocol/logLevel': level }, 'tools/list'), ctx().ctx);
    const setLevels = link.sessions.flatMap((s) => s.calls).filter((c) => c.req.method === 'logging/setLevel');
    expect(setLevels.map((c) => c.req.params)).toEqual([{ level: 'error' }, { level: 'debug' }]);
  });

  it('a message on a call’s own stream reaches it only at or above its level', async () => {
    const { bridge } = setup(
      {
        'tools/list': async (u) => {
          u.notify('notifications/message', { level: 'debug', data: 'd' });
          u.notify('notifications/message', { level: 'warning', data: 'w' });
          return { result: { tools: [] } };
        },
      },
      { correlates: true },
    );
    const c = ctx();
    await bridge.handle(call('', {}, { 'io.modelcontextprotocol/logLevel': 'info' }, 'tools/list'), c.ctx);
    const none = ctx();
    await bridge.handle(call('', {}, {}, 'tools/list'), none.ctx);
    expect(c.notes.map((n) => (n.params as Obj).data)).toEqual(['w']);
    expect(none.notes).toEqual([]);
  });
  it('a 2025-11-25 -32042 becomes a url round; the accepted retry re-issues the request upstream', async () => {
    let calls = 0;
    const { bridge, link } = setup({
      'tools/call': async () => {
        calls++;
        if (calls === 1) {
          const elicitations = [{ mode: 'url', url: 'https://auth.test/x', message: 'sign in', elicitationId: 'e-1' }];
          return { error: { code: -32042, message: 'URL elicitation required', data: { elicitations } } };
        }
        return { result: { content: [{ type: 'text', text: 'authorized' }] } };
      },
    });
    const req = call('t', { elicitation: { url: {} } });
    const first = result(await bridge.handle(req, ctx().ctx));
    expect(first).toMatchObject({ resultType: 'input_required', inputRequests: { 'url-1': { method: 'elicitation/create', params: { mode: 'url', url: 'https://auth.test/x', message: 'sign in' } } } });
    expect(JSON.stringify(first.inputRequests)).not.toContain('e-1');
    const again = result(await bridge.handle(retry(req, first, {}), ctx().ctx));
    expect(again.resultType).toBe('input_required');
    const done = result(await bridge.handle(retry(req, again, { 'url-1': { action: 'accept' } }), ctx().ctx));
    expect(done).toMatchObject({ resultType: 'complete', content: [{ text: 'authorized' }] });
    expect(link.sessions.flatMap((s) => s.calls).filter((c) => c.req.method === 'tools/call')).toHaveLength(2);
  });

  it('a -32042 for a request without elicitation.url is -32021; a declined url round is an error, not a loop', async () => {
    const elicitations = [{ mode: 'url', url: 'https://auth.test/x', message: 'sign in', elicitationId: 'e-1' }];
    const { bridge } = setup({ 'tools/call': async () => ({ error: { code: -32042, message: 'URL elicitation required', data: { elicitations } } }) });
    const res = await bridge.handle(call('t', { elicitation: {} }), ctx().ctx);
    expect('error' in res && res.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } });
    const req = call('t', { elicitation: { url: {} } });
    const first = result(await bridge.handle(req, ctx().ctx));
    const declined = await bridge.handle(retry(req, first, { 'url-1': { action: 'decline' } }), ctx().ctx);
    expect('error' in declined && declined.error).toMatchObject({ code: -32603, data: { declined: ['url-1'] } });
  });
  it('bridge close answers a running leg with an error saying why and cancels the call upstream', async () => {
    const { bridge, link } = setup({ 'tools/call': () => new Promise(() => undefined) });
    const pending = bridge.handle(call('t', allCaps), ctx().ctx);
    await waitFor(() => upstreamCall(link));
    await bridge.close();
    const res = await pending;
    expect('error' in res && res.error).toMatchObject({ code: -32603, message: 'upstream tools/call abandoned: mcp-bridge is shutting down' });
    expect(link.sessions[0].calls[0].cancelled).toBe(true);
    const after = await bridge.handle(call('t'), ctx().ctx);
    expect('error' in after && after.error.message).toMatch(/shutting down/);
  });

  it('calls of a client that declared no capabilities share one upstream session; one that declared some holds its own', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { bridge, link } = setup({ 'tools/call': async () => (await gate, { result: { content: [] } }) });
    const upstreamCalls = () => link.sessions.flatMap((s) => s.calls).filter((c) => c.req.method === 'tools/call').length;
    const plain = [bridge.handle(call('a'), ctx().ctx), bridge.handle(call('b'), ctx().ctx)];
    await waitFor(() => (upstreamCalls() === 2 ? true : undefined));
    expect(link.sessions).toHaveLength(1);
    // Two calls that may be asked something: one session each (plus the shared one).
    const asking = [bridge.handle(call('c', allCaps), ctx().ctx), bridge.handle(call('d', allCaps), ctx().ctx)];
    await waitFor(() => (upstreamCalls() === 4 ? true : undefined));
    expect(link.sessions).toHaveLength(3);
    release();
    for (const res of await Promise.all([...plain, ...asking])) expect('result' in res && res.result).toMatchObject({ resultType: 'complete' });
  });
});
