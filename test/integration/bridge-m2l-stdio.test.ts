import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId } from '@modelcontextprotocol/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { probeUpstream } from '../../src/epochs/probe-upstream.js';
import { LegacyStdioLink } from '../../src/links/legacy-stdio-link.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';

/**
 * The modern-to-legacy bridge driven through its ModernHandler API, in front of
 * server-everything children over stdio (real processes, real pool).
 */

const [COMMAND, ...ARGS] = EVERYTHING_STDIO_COMMAND;
const SUB = 'io.modelcontextprotocol/subscriptionId';
const DOC = 'demo://resource/static/document/architecture.md';

type Obj = Record<string, unknown>;

let facts: UpstreamFacts;
const running: Array<{ bridge: ModernToLegacyBridge; pool: SessionPool; link: LegacyStdioLink }> = [];

beforeAll(async () => {
  facts = await probeUpstream({ kind: 'command', command: COMMAND, args: ARGS }, { logger: silentLogger, epoch: 'initialize' });
});

afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.bridge.close();
    await r.pool.close();
    await r.link.close();
  }
});

function start(opts: { max?: number; ttlMs?: number; callTimeoutMs?: number } = {}) {
  const link = new LegacyStdioLink({ command: COMMAND, args: ARGS, logger: silentLogger, shutdownGraceMs: 1_000 });
  const pool = new SessionPool(link, { max: opts.max ?? 2, idleMs: 60_000, logger: silentLogger });
  const bridge = new ModernToLegacyBridge({
    pool,
    facts,
    logger: silentLogger,
    callTimeoutMs: opts.callTimeoutMs ?? 20_000,
    requestStateTtlMs: opts.ttlMs ?? 60_000,
    instanceId: 'test-instance',
  });
  running.push({ bridge, pool, link });
  return { bridge, pool, link };
}

let nextId = 1;

function modern(method: string, params: Obj = {}, caps: Obj = {}, meta: Obj = {}): JSONRPCRequest {
  return {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': caps,
        'io.modelcontextprotocol/clientInfo': { name: 'm2l-test', version: '1.0.0' },
        ...meta,
      },
    },
  } as JSONRPCRequest;
}

/** A context whose stream is recorded; `abort()` is the client closing it. */
function context(): { ctx: ModernRequestContext; notes: JSONRPCNotification[]; abort(): void } {
  const ac = new AbortController();
  const notes: JSONRPCNotification[] = [];
  return { ctx: { signal: ac.signal, notify: (n) => notes.push(n), transport: 'stdio' }, notes, abort: () => ac.abort() };
}

function resultOf(res: JSONRPCResponse): Obj {
  if ('error' in res) throw new Error(`expected a result, got error ${JSON.stringify(res.error)}`);
  return res.result as Obj;
}

function errorOf(res: JSONRPCResponse): { code: number; message: string; data?: unknown } {
  if (!('error' in res)) throw new Error(`expected an error, got ${JSON.stringify(res.result)}`);
  return res.error as { code: number; message: string; data?: unknown };
}

function text(result: Obj): string {
  return (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

/**
 * Drives a multi round-trip request like a modern client: answers every
 * embedded request with `answer`, retries with a new id, at most `maxRounds`.
 */
async function drive(bridge: ModernToLegacyBridge, req: JSONRPCRequest, answer: (entry: { method: string; params?: Obj }) => Obj, maxRounds = 5) {
  const rounds: Array<Record<string, { method: string; params?: Obj }>> = [];
  let res = await bridge.handle(req, context().ctx);
  for (let i = 0; i < maxRounds; i++) {
    const result = resultOf(res);
    if (result.resultType !== 'input_required') return { result, rounds };
    const inputRequests = result.inputRequests as Record<string, { method: string; params?: Obj }>;
    rounds.push(inputRequests);
    const inputResponses = Object.fromEntries(Object.entries(inputRequests).map(([k, e]) => [k, answer(e)]));
    const params = { ...(req.params as Obj), inputResponses, requestState: result.requestState };
    res = await bridge.handle({ ...req, id: nextId++, params } as JSONRPCRequest, context().ctx);
  }
  throw new Error(`still input_required after ${maxRounds} rounds`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('modern-to-legacy bridge over server-everything (stdio)', () => {
  it('server/discover is synthesised from the InitializeResult', async () => {
    const { bridge } = start();
    const r = resultOf(await bridge.handle(modern('server/discover'), context().ctx));
    expect(r.resultType).toBe('complete');
    expect(r.supportedVersions).toEqual(['2026-07-28']);
    expect(r.capabilities).toMatchObject({ tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} });
    expect(r.capabilities).not.toHaveProperty('tasks');
    expect(typeof r.instructions).toBe('string');
    expect(r).toMatchObject({ ttlMs: 0, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-servers/everything' } } });
  });

  it('tools/list is cacheable-shaped and reflects this request’s own capabilities', async () => {
    const { bridge } = start();
    const plain = resultOf(await bridge.handle(modern('tools/list'), context().ctx));
    const withElicitation = resultOf(await bridge.handle(modern('tools/list', {}, { elicitation: {} }), context().ctx));
    const names = (r: Obj) => (r.tools as Array<{ name: string }>).map((t) => t.name);
    expect(plain).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(names(plain)).toContain('echo');
    expect(names(plain)).not.toContain('trigger-elicitation-request');
    expect(names(withElicitation)).toContain('trigger-elicitation-request');
    for (const t of plain.tools as Obj[]) expect(t).not.toHaveProperty('execution');
  });

  it('echo returns a complete result with the client’s id', async () => {
    const { bridge } = start();
    const req = modern('tools/call', { name: 'echo', arguments: { message: 'hello bridge' } });
    const res = await bridge.handle(req, context().ctx);
    expect(res.id).toBe(req.id);
    const r = resultOf(res);
    expect(r.resultType).toBe('complete');
    expect(text(r)).toContain('hello bridge');
  });

  it('trigger-elicitation-request → input_required → retry with inputResponses → the same upstream call completes', async () => {
    const { bridge, pool } = start({ max: 1 });
    const caps = { elicitation: {} };
    const { result, rounds } = await drive(bridge, modern('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, caps), (e) => {
      expect(e.method).toBe('elicitation/create');
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    });
    expect(rounds).toHaveLength(1);
    const [key, entry] = Object.entries(rounds[0])[0];
    expect(key).toMatch(/^elicit-\d+$/);
    expect(entry.params).toMatchObject({ message: expect.any(String), requestedSchema: { type: 'object' } });
    expect(result.resultType).toBe('complete');
    expect(text(result)).toContain('Name: Ada Lovelace');
    expect(bridge.stats().parked).toBe(0);
    expect(pool.stats()).toMatchObject({ sessions: 1, leased: 0 });
  });

  it('trigger-sampling-request embeds sampling/createMessage and the retry’s answer reaches the server', async () => {
    const { bridge } = start();
    const { result, rounds } = await drive(bridge, modern('tools/call', { name: 'trigger-sampling-request', arguments: { prompt: 'ping', maxTokens: 5 } }, { sampling: {} }), () => ({
      role: 'assistant',
      content: { type: 'text', text: 'pong-from-modern-client' },
      model: 'test-model',
      stopReason: 'endTurn',
    }));
    expect(Object.values(rounds[0])[0]).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 5, messages: expect.any(Array) } });
    expect(text(result)).toContain('pong-from-modern-client');
  });

  it('get-roots-list embeds roots/list and the server lists the roots the modern client gave', async () => {
    const { bridge } = start();
    const { result, rounds } = await drive(bridge, modern('tools/call', { name: 'get-roots-list', arguments: {} }, { roots: {} }), (e) => {
      expect(e.method).toBe('roots/list');
      return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
    });
    expect(rounds.length).toBeGreaterThanOrEqual(1);
    expect(text(result)).toContain('URI: file:///work/project');
  });

  it('a tampered requestState is refused with -32602 naming it', async () => {
    const { bridge } = start();
    const req = modern('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} });
    const first = resultOf(await bridge.handle(req, context().ctx));
    expect(first.resultType).toBe('input_required');
    const state = first.requestState as string;
    const forged = state.slice(0, -3) + (state.endsWith('AAA') ? 'BBB' : 'AAA');
    const key = Object.keys(first.inputRequests as Obj)[0];
    const retry = { ...req, id: nextId++, params: { ...(req.params as Obj), inputResponses: { [key]: { action: 'decline' } }, requestState: forged } } as JSONRPCRequest;
    const err = errorOf(await bridge.handle(retry, context().ctx));
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/tampered/);
    expect(err.data).toEqual({ requestState: 'tampered' });
    // The genuine state still works: nothing was consumed by the forgery.
    const ok = { ...retry, id: nextId++, params: { ...(retry.params as Obj), requestState: state } } as JSONRPCRequest;
    expect(text(resultOf(await bridge.handle(ok, context().ctx)))).toContain('declined');
  });

  it('a retry with other params is refused (-32602), and an expired state is refused as expired', async () => {
    const { bridge } = start({ ttlMs: 400 });
    const req = modern('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} });
    const first = resultOf(await bridge.handle(req, context().ctx));
    const other = { ...req, id: nextId++, params: { ...(req.params as Obj), arguments: { x: 1 }, requestState: first.requestState } } as JSONRPCRequest;
    expect(errorOf(await bridge.handle(other, context().ctx))).toMatchObject({ code: -32602, data: { requestState: 'params' } });
    // The bridge dropping the parked call at its TTL is the expiry.
    expect(bridge.stats().parked).toBe(1);
    await until(() => bridge.stats().parked === 0, 3_000);
    const late = { ...req, id: nextId++, params: { ...(req.params as Obj), inputResponses: {}, requestState: first.requestState } } as JSONRPCRequest;
    const err = errorOf(await bridge.handle(late, context().ctx));
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/expired/);
    expect(err.data).toEqual({ requestState: 'expired' });
  });

  it('a parked call reaching its TTL is cancelled upstream and its session is freed for the next call', async () => {
    const { bridge, pool } = start({ max: 1, ttlMs: 300 });
    const first = resultOf(await bridge.handle(modern('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} }), context().ctx));
    expect(first.resultType).toBe('input_required');
    expect(bridge.stats().parked).toBe(1);
    expect(pool.stats().leased).toBe(1);
    await until(() => bridge.stats().parked === 0 && pool.stats().leased === 0, 3_000);
    // With max 1 the next exclusive call needs that very session (or a fresh one): it must not wait.
    const echo = await bridge.handle(modern('tools/call', { name: 'echo', arguments: { message: 'after ttl' } }, { elicitation: {} }), context().ctx);
    expect(text(resultOf(echo))).toContain('after ttl');
  });

  it('two concurrent calls on one pool each get their own answer', async () => {
    const { bridge, pool } = start({ max: 2 });
    const a = modern('tools/call', { name: 'echo', arguments: { message: 'alpha' } });
    const b = modern('tools/call', { name: 'echo', arguments: { message: 'beta' } });
    const elicit = modern('tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} });
    const [ra, rb, re] = await Promise.all([bridge.handle(a, context().ctx), bridge.handle(b, context().ctx), bridge.handle(elicit, context().ctx)]);
    expect(ra.id).toBe(a.id);
    expect(rb.id).toBe(b.id);
    expect(re.id).toBe(elicit.id);
    expect(text(resultOf(ra))).toContain('alpha');
    expect(text(resultOf(rb))).toContain('beta');
    expect(resultOf(re).resultType).toBe('input_required');
    expect(pool.stats().sessions).toBeLessThanOrEqual(2);
  });

  it('progress reaches the request’s own stream with its own token', async () => {
    const { bridge } = start();
    const { ctx, notes } = context();
    const req = modern('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 2 } }, {}, { progressToken: 'tok-7' });
    const r = resultOf(await bridge.handle(req, ctx));
    expect(text(r)).toContain('Long running operation completed');
    const progress = notes.filter((n) => n.method === 'notifications/progress');
    expect(progress.map((n) => (n.params as Obj).progressToken)).toEqual(['tok-7', 'tok-7']);
    expect(progress.map((n) => (n.params as Obj).progress)).toEqual([1, 2]);
  });

  it('notifications/message goes only to a request that set logLevel', async () => {
    const { bridge } = start({ max: 1 });
    const asked = context();
    const toggle = (meta: Obj) => modern('tools/call', { name: 'toggle-simulated-logging', arguments: {} }, {}, meta);
    await bridge.handle(toggle({ 'io.modelcontextprotocol/logLevel': 'debug' }), asked.ctx);
    const silent = context();
    await bridge.handle(toggle({}), silent.ctx); // stops the simulation
    expect(asked.notes.filter((n) => n.method === 'notifications/message').length).toBeGreaterThanOrEqual(1);
    expect(silent.notes).toEqual([]);
  });

  it('closing the request stream mid-call cancels it and frees the session', async () => {
    const { bridge, pool } = start({ max: 1 });
    const { ctx, abort } = context();
    const started = Date.now();
    const pending = bridge.handle(modern('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } }), ctx);
    await until(() => pool.stats().leased === 1, 5_000);
    abort();
    const err = errorOf(await pending);
    expect(err.code).toBe(-32800);
    expect(Date.now() - started).toBeLessThan(8_000);
    await until(() => pool.stats().leased === 0, 2_000);
    expect(text(resultOf(await bridge.handle(modern('tools/call', { name: 'echo', arguments: { message: 'next' } }), context().ctx)))).toContain('next');
  });

  it('subscriptions/listen: acknowledgement first, then resources/updated stamped with the subscriptionId, graceful end on close', async () => {
    const { bridge } = start({ max: 1 });
    const { ctx, notes } = context();
    const listen = modern('subscriptions/listen', { notifications: { resourceSubscriptions: [DOC], toolsListChanged: true, taskIds: ['x'] } });
    const ended = bridge.handle(listen, ctx);
    await until(() => notes.length >= 1, 5_000);
    expect(notes[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true, resourceSubscriptions: [DOC] }, _meta: { [SUB]: listen.id } },
    });
    const toggled = await bridge.handle(modern('tools/call', { name: 'toggle-subscriber-updates', arguments: {} }), context().ctx);
    expect(text(resultOf(toggled))).toContain('Started');
    await until(() => notes.some((n) => n.method === 'notifications/resources/updated'), 5_000);
    const update = notes.find((n) => n.method === 'notifications/resources/updated')!;
    expect(update.params).toEqual({ uri: DOC, _meta: { [SUB]: listen.id } });
    expect(notes.some((n) => n.method === 'notifications/progress' || n.method === 'notifications/message')).toBe(false);
    await bridge.close();
    const res = await ended;
    expect(res.id).toBe(listen.id);
    expect(resultOf(res)).toMatchObject({ resultType: 'complete', _meta: { [SUB]: listen.id } });
  });

  it('a listen whose stream closes resolves and releases its subscription', async () => {
    const { bridge } = start({ max: 1 });
    const { ctx, notes, abort } = context();
    const ended = bridge.handle(modern('subscriptions/listen', { notifications: { resourceSubscriptions: [DOC] } }), ctx);
    await until(() => notes.length >= 1, 5_000);
    expect(bridge.stats().listens).toBe(1);
    abort();
    await ended;
    expect(bridge.stats().listens).toBe(0);
  });

  it('2025-11-25 url elicitation: the -32042 error path and the request path both become MRTR rounds', async () => {
    const { bridge } = start({ max: 1 });
    const args = { url: 'https://example.test/consent', message: 'Please consent', errorPath: true };
    const { result, rounds } = await drive(bridge, modern('tools/call', { name: 'trigger-url-elicitation', arguments: args }, { elicitation: { url: {} } }), () => ({ action: 'accept' }));
    expect(rounds).toHaveLength(2);
    const [prerequisite] = Object.values(rounds[0]);
    const [request] = Object.values(rounds[1]);
    expect(prerequisite).toMatchObject({ method: 'elicitation/create', params: { mode: 'url', url: 'https://modelcontextprotocol.io' } });
    expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'url', url: args.url, message: args.message } });
    for (const e of [prerequisite, request]) expect(e.params).not.toHaveProperty('elicitationId');
    expect(text(result)).toContain('User completed the URL elicitation flow');
  });

  it('a listen receives tools/list_changed sent by the server (server-everything registers tools after initialize)', async () => {
    const { bridge } = start({ max: 2 });
    const { ctx, notes } = context();
    const listen = modern('subscriptions/listen', { notifications: { toolsListChanged: true } });
    void bridge.handle(listen, ctx);
    await until(() => notes.length >= 1, 5_000);
    // A request with other capabilities opens another child, whose conditional tools arrive after initialize.
    await bridge.handle(modern('tools/list', {}, { roots: {} }), context().ctx);
    await until(() => notes.some((n) => n.method === 'notifications/tools/list_changed'), 5_000);
    const changed = notes.find((n) => n.method === 'notifications/tools/list_changed')!;
    expect(changed.params).toEqual({ _meta: { [SUB]: listen.id } });
  });

  it('a child that dies mid-call answers that call with a clear error, and the next call gets a fresh child', async () => {
    const { bridge, link, pool } = start({ max: 1 });
    const pending = bridge.handle(modern('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } }), context().ctx);
    await until(() => pool.stats().leased === 1 && link.pids().length === 1, 5_000);
    const [pid] = link.pids();
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const err = errorOf(await pending);
    expect(Date.now() - killedAt).toBeLessThan(2_000);
    expect(err.code).toBe(-32603);
    expect(err.message).toMatch(/exited|closed/);
    const next = await bridge.handle(modern('tools/call', { name: 'echo', arguments: { message: 'reborn' } }), context().ctx);
    expect(text(resultOf(next))).toContain('reborn');
    expect(link.pids()).not.toContain(pid);
  });

  it('unknown methods are -32601 and a listen without a filter is -32602', async () => {
    const { bridge } = start();
    expect(errorOf(await bridge.handle(modern('tasks/get', { taskId: 't' }), context().ctx)).code).toBe(-32601);
    expect(errorOf(await bridge.handle(modern('constructor'), context().ctx)).code).toBe(-32601);
    expect(errorOf(await bridge.handle(modern('subscriptions/listen'), context().ctx)).code).toBe(-32602);
  });
});

export type { RequestId };
