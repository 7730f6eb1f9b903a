import type { JSONRPCNotification, JSONRPCResponse } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LegacyToModernBridge } from '../../bridges/legacy-to-modern/index.js';
import type { LegacyChannel, LegacyRequestContext, LegacySessionHandler } from '../../src/contracts/downstream.js';
import type { ModernLink, UpstreamFacts } from '../../src/contracts/upstream.js';
import { probeUpstream } from '../../src/epochs/probe-upstream.js';
import { ModernHttpLink } from '../../src/links/modern-http-link.js';
import { LazyAbort } from '../../src/links/lazy-abort.js';
import { ModernStdioLink } from '../../src/links/modern-stdio-link.js';
import { silentLogger } from '../../src/log.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { waitFor } from '../helpers/wait-for.js';

type Obj = Record<string, unknown>;
type Answer = (method: string, params: Obj | undefined) => Promise<Obj>;

const ALL_CAPS = { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } };


const textOf = (r: JSONRPCResponse) => ((r as { result?: { content?: { text: string }[] } }).result?.content?.[0]?.text);

/** A downstream legacy session driven directly through the LegacyHandler API. */
async function open(bridge: LegacyToModernBridge, version = '2025-11-25', caps: Obj = ALL_CAPS) {
  const unsolicited: JSONRPCNotification[] = [];
  const channel: LegacyChannel = {
    notify: (n) => (unsolicited.push(n), true),
    request: () => Promise.reject(new Error('no unsolicited requests expected')),
  };
  const { result, session } = await bridge.openSession(
    { protocolVersion: version, capabilities: caps, clientInfo: { name: 'l2m-handler-test', version: '1.0.0' } },
    { id: `s-${Math.random()}`, clientCapabilities: caps, clientInfo: { name: 'l2m-handler-test', version: '1.0.0' }, transport: 'streamable-http' },
    channel,
  );
  let seq = 0;
  const call = (method: string, params: Obj, o: { answer?: Answer; signal?: AbortSignal; cancel?: LazyAbort } = {}) => {
    const related: JSONRPCNotification[] = [];
    const asked: { method: string; params: Obj | undefined }[] = [];
    const signal = o.signal ?? new AbortController().signal;
    const ctx = {
      session: { id: 's', protocolVersion: result.protocolVersion, clientCapabilities: caps, clientInfo: { name: 'x', version: '1' }, transport: 'streamable-http' },
      // With the face's cheap cancel, reading the AbortSignal is what the bridge must not need.
      get signal() {
        if (o.cancel) throw new Error('ctx.signal read although ctx.cancel was given');
        return signal;
      },
      cancel: o.cancel,
      notify: (n: JSONRPCNotification) => (related.push(n), true),
      request: (m: string, p: Obj | undefined) => {
        asked.push({ method: m, params: p });
        return o.answer ? o.answer(m, p) : Promise.reject(new Error(`unexpected ${m}`));
      },
    } as unknown as LegacyRequestContext;
    const response = session.handleRequest({ jsonrpc: '2.0', id: ++seq, method, params } as never, ctx);
    return { response, related, asked };
  };
  return { result, session, unsolicited, call };
}

const transports: { name: string; start(): Promise<{ link: ModernLink; facts: UpstreamFacts; close(): Promise<void>; server?: RunningModernServer }> }[] = [
  {
    name: 'http',
    async start() {
      const server = await startModernHttpServer();
      const facts = await probeUpstream({ kind: 'url', url: server.url, headers: {} }, { logger: silentLogger });
      const link = new ModernHttpLink({ url: server.url, headers: {}, logger: silentLogger });
      return { link, facts, server, close: async () => (await link.close(), await server.close()) };
    },
  },
  {
    name: 'stdio',
    async start() {
      const [command, ...args] = MODERN_STDIO_COMMAND;
      const target = { kind: 'command' as const, command: command!, args };
      const facts = await probeUpstream(target, { logger: silentLogger, timeoutMs: 10_000 });
      const link = new ModernStdioLink({ command: command!, args, logger: silentLogger });
      return { link, facts, close: () => link.close() };
    },
  },
];

for (const t of transports) {
  describe(`LegacyToModernBridge against the modern fixture over ${t.name}`, () => {
    let up: Awaited<ReturnType<(typeof transports)[number]['start']>>;
    let bridge: LegacyToModernBridge;
    const sessions: LegacySessionHandler[] = [];
    const session = async (version?: string, caps?: Obj) => {
      const s = await open(bridge, version, caps);
      sessions.push(s.session);
      return s;
    };

    beforeAll(async () => {
      up = await t.start();
      bridge = new LegacyToModernBridge({ link: up.link, facts: up.facts, logger: silentLogger, callTimeoutMs: 10_000, maxInputRounds: 4, inputTimeoutMs: 300 });
    }, 20_000);
    afterEach(async () => {
      for (const s of sessions.splice(0)) await s.close();
    });
    afterAll(async () => {
      await bridge.close();
      await up.close();
    });
    /** Asks the fixture (a second call on the session) until it runs a `slow` call: a loaded machine may start it late. */
    const slowRuns = async (s: Awaited<ReturnType<typeof session>>) => {
      for (const runningBy = Date.now() + 5_000; Date.now() < runningBy; await new Promise((res) => setTimeout(res, 20))) {
        const r = (await s.call('tools/call', { name: 'last-cancelled', arguments: {} }).response) as unknown as { result: { structuredContent: { running: number } } };
        if (r.result.structuredContent.running > 0) return;
      }
      throw new Error('the slow call did not start running on the server within 5 s');
    };

    it('initialize is answered from server/discover: negotiated version, serverInfo, capabilities', async () => {
      const { result } = await session('2025-06-18');
      expect(result).toEqual({
        protocolVersion: '2025-06-18',
        serverInfo: { name: 'modern-fixture', version: '1.0.0' },
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} },
      });
      expect((await session('2031-01-01')).result.protocolVersion).toBe('2025-11-25');
    });

    it('tools/call and tools/list reach the upstream and come back without 2026-only keys', async () => {
      const s = await session();
      const echo = await s.call('tools/call', { name: 'echo', arguments: { message: 'hi' } }).response;
      expect(textOf(echo)).toBe('Echo: hi');
      const list = (await s.call('tools/list', {}).response) as { result: Obj };
      expect((list.result.tools as { name: string }[]).map((x) => x.name)).toContain('ask-name');
      for (const k of ['resultType', 'ttlMs', 'cacheScope']) {
        expect(list.result).not.toHaveProperty(k);
        expect((echo as { result: Obj }).result).not.toHaveProperty(k);
      }
    });

    it('ask-name: several MRTR rounds become real elicitation requests, answered in order', async () => {
      const s = await session('2025-06-18', { elicitation: {} });
      const answers = [{ action: 'accept', content: { name: 'Ada' } }, { action: 'accept', content: { ok: true } }];
      const c = s.call('tools/call', { name: 'ask-name', arguments: {} }, { answer: async () => answers.shift()! });
      expect(textOf(await c.response)).toBe('Hello, Ada!');
      expect(c.asked.map((a) => a.method)).toEqual(['elicitation/create', 'elicitation/create']);
      expect(c.asked[0]!.params).toMatchObject({ message: 'What is your name?' });
      expect(c.asked[0]!.params).not.toHaveProperty('mode');
      expect(c.asked[1]!.params).toMatchObject({ message: 'Is "Ada" right?' });
    });

    it('ask-two: two inputs at once (elicitation and roots/list)', async () => {
      const s = await session();
      const c = s.call('tools/call', { name: 'ask-two', arguments: {} }, {
        answer: async (m) => (m === 'roots/list' ? { roots: [{ uri: 'file:///work', name: 'work' }] } : { action: 'accept', content: { color: 'teal' } }),
      });
      expect(textOf(await c.response)).toBe('color=teal roots=file:///work');
      expect(c.asked.map((a) => a.method).sort()).toEqual(['elicitation/create', 'roots/list']);
    });

    it('sample: sampling/createMessage goes to the client', async () => {
      const s = await session();
      const c = s.call('tools/call', { name: 'sample', arguments: { prompt: 'hello?' } }, {
        answer: async () => ({ role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'test-model' }),
      });
      expect(textOf(await c.response)).toBe('sampled: hi there');
      expect(c.asked[0]).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 50 } });
    });

    it('a 2025-03-26 client cannot elicit: ask-name is an isError result and the client is never asked', async () => {
      const s = await session('2025-03-26', { elicitation: {}, sampling: {} });
      const c = s.call('tools/call', { name: 'ask-name', arguments: {} });
      const r = (await c.response) as { result: { isError?: boolean } };
      expect(r.result.isError).toBe(true);
      expect(c.asked).toEqual([]);
    });

    it('a client that never answers an input request gets a timeout error', async () => {
      const s = await session();
      const c = s.call('tools/call', { name: 'ask-name', arguments: {} }, {
        answer: () => new Promise((_, reject) => setTimeout(() => reject(new Error('elicitation/create not answered within 300 ms')), 300)),
      });
      expect(await c.response).toMatchObject({ error: { code: -32603, message: expect.stringMatching(/not answered within 300 ms/) } });
    });

    it('progress notifications from the call stream reach ctx.notify with the client token', async () => {
      const s = await session();
      const c = s.call('tools/call', { name: 'progress', arguments: { steps: 3 }, _meta: { progressToken: 'tok-1' } });
      expect(textOf(await c.response)).toBe('done 3 steps');
      const progress = c.related.filter((n) => n.method === 'notifications/progress');
      expect(progress.map((n) => (n.params as Obj).progress)).toEqual([1, 2, 3]);
      expect(progress.every((n) => (n.params as Obj).progressToken === 'tok-1')).toBe(true);
    });

    it('logging/setLevel is stored and sent as logLevel: messages below it are not sent, at or above it are', async () => {
      const s = await session();
      expect(await s.call('logging/setLevel', { level: 'warning' }).response).toMatchObject({ result: {} });
      const quiet = s.call('tools/call', { name: 'log', arguments: { level: 'info', data: 'hush' } });
      await quiet.response;
      const loud = s.call('tools/call', { name: 'log', arguments: { level: 'error', data: 'shout' } });
      await loud.response;
      expect(quiet.related.filter((n) => n.method === 'notifications/message')).toEqual([]);
      expect(loud.related.filter((n) => n.method === 'notifications/message').map((n) => (n.params as Obj).data)).toEqual(['shout']);
      expect(await s.call('logging/setLevel', { level: 'loud' }).response).toMatchObject({ error: { code: -32602 } });
    });

    it('add-tool: the session receives tools/list_changed through its listen', async () => {
      const s = await session();
      await s.call('tools/call', { name: 'add-tool', arguments: { name: `added-${t.name}` } }).response;
      const n = await waitFor(() => s.unsolicited.find((x) => x.method === 'notifications/tools/list_changed'));
      expect(n.params?._meta?.['io.modelcontextprotocol/subscriptionId']).toBeUndefined();
    });

    it('resources/subscribe is answered locally; resources/updated reaches the subscriber, not after unsubscribe', async () => {
      const s = await session();
      const other = await session();
      expect(await s.call('resources/subscribe', { uri: 'test://counter' }).response).toMatchObject({ result: {} });
      await s.call('tools/call', { name: 'bump', arguments: {} }).response;
      const n = await waitFor(() => s.unsolicited.find((x) => x.method === 'notifications/resources/updated'));
      expect(n.params).toEqual({ uri: 'test://counter' });
      expect(other.unsolicited.filter((x) => x.method === 'notifications/resources/updated')).toEqual([]);
      expect(await s.call('resources/unsubscribe', { uri: 'test://counter' }).response).toMatchObject({ result: {} });
      const before = s.unsolicited.length;
      await s.call('tools/call', { name: 'bump', arguments: {} }).response;
      // A tools/list_changed sent after the bump comes down the same listen, behind any resources/updated.
      await s.call('tools/call', { name: 'add-tool', arguments: { name: `added-${t.name}` } }).response;
      await waitFor(() => s.unsolicited.slice(before).find((x) => x.method === 'notifications/tools/list_changed'), 5_000, 'tools/list_changed after the bump');
      expect(s.unsolicited.slice(before).filter((x) => x.method === 'notifications/resources/updated')).toEqual([]);
    });

    it('x-mcp-header: tenant-echo goes upstream with Mcp-Param-Region on HTTP', async () => {
      const s = await session();
      const r = (await s.call('tools/call', { name: 'tenant-echo', arguments: { region: 'eu-west' } }).response) as { result: Obj };
      expect(r.result.structuredContent).toEqual({ region: 'eu-west', header: t.name === 'http' ? 'eu-west' : null });
    });

    it('session close ends its calls: a request in flight is answered with an error', async () => {
      const s = await session();
      const c = s.call('tools/call', { name: 'slow', arguments: { ms: 5_000 } });
      await slowRuns(s);
      await s.session.close();
      expect(await c.response).toMatchObject({ error: { code: -32603 } });
      expect(await s.call('tools/call', { name: 'echo', arguments: { message: 'x' } }).response).toMatchObject({ error: { message: 'Session closed' } });
    });

    it('a client cancel through the face\'s own cancel (ctx.cancel, no AbortSignal read) aborts the upstream call, which the server sees', async () => {
      const s = await session();
      const cancel = new LazyAbort();
      const c = s.call('tools/call', { name: 'slow', arguments: { ms: 5_000 } }, { cancel });
      await slowRuns(s);
      cancel.abort(new Error('cancelled by the client'));
      expect(await c.response).toMatchObject({ error: { code: -32603 } });
      const lastCancelled = async () => ((await s.call('tools/call', { name: 'last-cancelled', arguments: {} }).response) as unknown as { result: { structuredContent: { cancelled: unknown } } }).result.structuredContent.cancelled === true;
      await waitFor(lastCancelled, 3_000, 'the upstream call cancelled');
    });

    it('a client cancel aborts the upstream call, which the server sees', async () => {
      const s = await session();
      const ac = new AbortController();
      const c = s.call('tools/call', { name: 'slow', arguments: { ms: 5_000 } }, { signal: ac.signal });
      // Cancel only once the server runs the call.
      await slowRuns(s);
      ac.abort();
      expect(await c.response).toMatchObject({ error: { code: -32603 } });
      const deadline = Date.now() + 3_000;
      let cancelled: unknown = null;
      while (Date.now() < deadline) {
        const r = (await s.call('tools/call', { name: 'last-cancelled', arguments: {} }).response) as unknown as { result: { structuredContent: { cancelled: unknown } } };
        cancelled = r.result.structuredContent.cancelled;
        if (cancelled === true) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      expect(cancelled).toBe(true);
    });
  });
}

describe('LegacyToModernBridge: an upstream listen that drops is re-opened', () => {
  it('killing the stdio server ends the listen; the bridge re-opens it and notifications flow again', async () => {
    const [command, ...args] = MODERN_STDIO_COMMAND;
    const facts = await probeUpstream({ kind: 'command', command: command!, args }, { logger: silentLogger, timeoutMs: 10_000 });
    const link = new ModernStdioLink({ command: command!, args, logger: silentLogger });
    const bridge = new LegacyToModernBridge({ link, facts, logger: silentLogger, callTimeoutMs: 10_000, maxInputRounds: 4, inputTimeoutMs: 1_000 });
    try {
      const s = await open(bridge);
      const firstPid = link.pid!;
      expect(firstPid).toBeGreaterThan(0);
      process.kill(firstPid, 'SIGKILL');
      // The re-opened listen tells the client to refresh what it may have missed.
      await waitFor(() => s.unsolicited.find((n) => n.method === 'notifications/tools/list_changed'), 8_000);
      expect(link.pid).not.toBe(firstPid);
      const before = s.unsolicited.length;
      await s.call('tools/call', { name: 'add-tool', arguments: { name: 'after-restart' } }).response;
      await waitFor(() => s.unsolicited.slice(before).find((n) => n.method === 'notifications/tools/list_changed'));
      await s.session.close();
    } finally {
      await bridge.close();
      await link.close();
    }
  }, 20_000);
});
