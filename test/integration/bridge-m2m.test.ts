import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModernToModernBridge } from '../../bridges/modern-to-modern/index.js';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { CallHandlers, ModernLink, OutboundRequest } from '../../src/contracts/upstream.js';
import type { RpcOutcome } from '../../src/jsonrpc/messages.js';
import { ModernHttpLink } from '../../src/links/modern-http-link.js';
import { silentLogger } from '../../src/log.js';
import { startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { waitFor } from '../helpers/wait-for.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'm2m-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};

/** The real link, with every call and its outcome written down on the way through. */
class RecordingLink implements ModernLink {
  readonly kind: ModernLink['kind'];
  readonly calls: Array<{ req: OutboundRequest; outcome?: RpcOutcome }> = [];
  constructor(private readonly inner: ModernLink) {
    this.kind = inner.kind;
  }
  async call(req: OutboundRequest, handlers?: CallHandlers): Promise<RpcOutcome> {
    const entry: { req: OutboundRequest; outcome?: RpcOutcome } = { req: structuredClone(req) };
    this.calls.push(entry);
    entry.outcome = await this.inner.call(req, handlers);
    return entry.outcome;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let seq = 0;
function req(method: string, params: Record<string, unknown> = {}, id: string | number = `r${++seq}`): JSONRPCRequest {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } } as JSONRPCRequest;
}

function context(transport: 'http' | 'stdio' = 'http') {
  const controller = new AbortController();
  const notes: JSONRPCNotification[] = [];
  const ctx: ModernRequestContext = { signal: controller.signal, notify: (n) => void notes.push(n), transport };
  return { ctx, notes, controller };
}

function resultOf(r: JSONRPCResponse): Record<string, unknown> {
  if ('error' in r) throw new Error(`unexpected error ${JSON.stringify(r.error)}`);
  return r.result as Record<string, unknown>;
}

describe('modern-to-modern against the modern fixture over HTTP', () => {
  let server: RunningModernServer;
  let link: RecordingLink;
  let bridge: ModernToModernBridge;

  beforeAll(async () => {
    server = await startModernHttpServer();
    link = new RecordingLink(new ModernHttpLink({ url: server.url, headers: {}, logger: silentLogger, callTimeoutMs: 10_000 }));
    bridge = new ModernToModernBridge({ link, logger: silentLogger, callTimeoutMs: 10_000 });
  });

  afterAll(async () => {
    await bridge?.close();
    await link?.close();
    await server?.close();
  });

  it('relays echo with the client id, params sent upstream untouched', async () => {
    const r = req('tools/call', { name: 'echo', arguments: { message: 'héllo' } }, 42);
    const res = await bridge.handle(r, context().ctx);
    expect(res.id).toBe(42);
    expect(resultOf(res).content).toEqual([{ type: 'text', text: 'Echo: héllo' }]);
    const sent = link.calls.at(-1)!.req;
    expect(sent).toEqual({ method: 'tools/call', params: r.params, id: 42 });
  });

  it('passes requestState through byte-exact across MRTR rounds', async () => {
    const first = resultOf(await bridge.handle(req('tools/call', { name: 'ask-name', arguments: {} }), context().ctx));
    expect(first.resultType).toBe('input_required');
    expect(Object.keys(first.inputRequests as object)).toEqual(['name']);

    const second = await bridge.handle(
      req('tools/call', { name: 'ask-name', arguments: {}, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } }),
      context().ctx,
    );
    const secondResult = resultOf(second);
    expect(secondResult.resultType).toBe('input_required');
    expect(typeof secondResult.requestState).toBe('string');
    // The client sees exactly what the server answered.
    expect(JSON.stringify(secondResult)).toBe(JSON.stringify((link.calls.at(-1)!.outcome as { result: unknown }).result));

    const state = secondResult.requestState as string;
    const third = req('tools/call', { name: 'ask-name', arguments: {}, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: state });
    const thirdResult = resultOf(await bridge.handle(third, context().ctx));
    expect((link.calls.at(-1)!.req.params as { requestState: string }).requestState).toBe(state);
    expect(thirdResult.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
  });

  it('relays a listen: the ack and tools/list_changed on its stream, a graceful result at shutdown', async () => {
    const listenBridge = new ModernToModernBridge({ link, logger: silentLogger, callTimeoutMs: 10_000 });
    const listen = context();
    const pending = listenBridge.handle(req('subscriptions/listen', { notifications: { toolsListChanged: true } }, 'listen-1'), listen.ctx);
    await waitFor(() => listen.notes.some((n) => n.method === 'notifications/subscriptions/acknowledged') || undefined, 5_000, 'the listen acknowledged');
    expect(listen.notes[0].method).toBe('notifications/subscriptions/acknowledged');

    await bridge.handle(req('tools/call', { name: 'add-tool', arguments: { name: 'added-by-m2m' } }), context().ctx);
    await waitFor(() => listen.notes.some((n) => n.method === 'notifications/tools/list_changed') || undefined, 5_000, 'tools/list_changed on the listen');
    const changed = listen.notes.find((n) => n.method === 'notifications/tools/list_changed')!;
    expect((changed.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/subscriptionId']).toBe('listen-1');

    await listenBridge.close();
    const end = await pending;
    expect(end).toEqual({ jsonrpc: '2.0', id: 'listen-1', result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } } });
  });

  it('drops tools with invalid x-mcp-header from tools/list for HTTP clients only, and remembers valid specs', async () => {
    await bridge.handle(req('tools/call', { name: 'add-tool', arguments: { name: 'bad-header-tool', header: 'Bad Header' } }), context().ctx);
    const overHttp = (resultOf(await bridge.handle(req('tools/list'), context('http').ctx)).tools as Array<{ name: string }>).map((t) => t.name);
    const overStdio = (resultOf(await bridge.handle(req('tools/list'), context('stdio').ctx)).tools as Array<{ name: string }>).map((t) => t.name);
    expect(overStdio).toContain('bad-header-tool');
    expect(overHttp).not.toContain('bad-header-tool');
    expect(overHttp).toContain('tenant-echo');
    expect(overStdio.filter((n) => n !== 'bad-header-tool').sort()).toEqual([...overHttp].sort());
    expect(bridge.paramHeaders('tenant-echo')).toEqual([{ name: 'Region', path: ['region'], type: 'string' }]);
    expect(bridge.paramHeaders('echo')).toBeUndefined();
    expect(bridge.paramHeaders('bad-header-tool')).toBeUndefined();
  });

  it('cancels upstream when the client aborts', async () => {
    const slow = context();
    const pending = bridge.handle(req('tools/call', { name: 'slow', arguments: { ms: 5_000 } }), slow.ctx);
    await waitFor(() => server.state.slowRunning > 0 || undefined, 5_000, 'the slow call running on the server');
    slow.controller.abort();
    const res = await pending;
    expect('error' in res).toBe(true);
    await waitFor(() => server.state.lastCancelled === true || undefined, 5_000, 'the server seeing the call cancelled');
  });
});
