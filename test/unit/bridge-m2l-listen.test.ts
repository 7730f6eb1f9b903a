import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ModernToLegacyBridge } from '../../bridges/modern-to-legacy/index.js';
import type { ModernRequestContext } from '../../src/contracts/downstream.js';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { SessionPool } from '../../src/links/session-pool.js';
import { silentLogger } from '../../src/log.js';
import { ScriptedLink, type Obj, type Script } from './bridge-m2l-scripted.js';

/** subscriptions/listen over a scripted legacy session: refcounted subscribe, refusals, fan-out, re-anchoring. */

const SUB = 'io.modelcontextprotocol/subscriptionId';
const facts: UpstreamFacts = {
  epoch: 'initialize',
  transport: 'stdio',
  protocolVersion: '2025-11-25',
  capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
  serverInfo: { name: 'scripted', version: '1' },
};

const open: Array<{ bridge: ModernToLegacyBridge; pool: SessionPool }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bridge.close();
    await o.pool.close();
  }
});

function setup(scripts: Record<string, Script> = {}) {
  const link = new ScriptedLink(scripts);
  const pool = new SessionPool(link, { max: 4, idleMs: 60_000, logger: silentLogger });
  const bridge = new ModernToLegacyBridge({ pool, facts, logger: silentLogger, callTimeoutMs: 5_000, requestStateTtlMs: 60_000 });
  open.push({ bridge, pool });
  const upstreamCalls = (method: string) => link.sessions.flatMap((s) => s.calls).filter((c) => c.req.method === method).map((c) => c.req.params);
  return { bridge, pool, link, upstreamCalls };
}

let ids = 1;
function listen(notifications: Obj | undefined, caps: Obj = {}): JSONRPCRequest {
  const params: Obj = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': caps } };
  if (notifications) params.notifications = notifications;
  return { jsonrpc: '2.0', id: `L${ids++}`, method: 'subscriptions/listen', params } as JSONRPCRequest;
}

function stream() {
  const ac = new AbortController();
  const notes: JSONRPCNotification[] = [];
  const ctx: ModernRequestContext = { signal: ac.signal, notify: (n) => notes.push(n), transport: 'http' };
  return { ctx, notes, close: () => ac.abort() };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

function notification(method: string, params?: Obj): JSONRPCNotification {
  return { jsonrpc: '2.0', method, params } as JSONRPCNotification;
}

describe('subscriptions/listen in front of a legacy server', () => {
  it('subscribes a URI upstream once across listens and unsubscribes when the last one ends', async () => {
    const { bridge, upstreamCalls } = setup();
    const a = stream();
    const b = stream();
    const endA = bridge.handle(listen({ resourceSubscriptions: ['x://1'] }), a.ctx);
    const endB = bridge.handle(listen({ resourceSubscriptions: ['x://1', 'x://2'] }), b.ctx);
    await tick();
    expect(upstreamCalls('resources/subscribe')).toEqual([{ uri: 'x://1' }, { uri: 'x://2' }]);
    a.close();
    await endA;
    expect(upstreamCalls('resources/unsubscribe')).toEqual([]);
    b.close();
    const res: JSONRPCResponse = await endB;
    await tick();
    expect(upstreamCalls('resources/unsubscribe')).toEqual([{ uri: 'x://1' }, { uri: 'x://2' }]);
    expect(res).toMatchObject({ result: { resultType: 'complete', _meta: { [SUB]: (res as { id: string }).id } } });
  });

  it('a URI the server refuses to subscribe is left out of the honoured subset', async () => {
    const { bridge } = setup({ 'resources/subscribe': async (u) => ((u.req.params as Obj).uri === 'x://bad' ? { error: { code: -32602, message: 'no such resource' } } : { result: {} }) });
    const s = stream();
    void bridge.handle(listen({ resourceSubscriptions: ['x://ok', 'x://bad'], toolsListChanged: true }), s.ctx);
    await tick();
    expect((s.notes[0].params as Obj).notifications).toEqual({ resourceSubscriptions: ['x://ok'], toolsListChanged: true });
  });

  it('nothing honoured: the acknowledgement, then the graceful result at once', async () => {
    const { bridge } = setup();
    const s = stream();
    const res = await bridge.handle(listen({ promptsListChanged: true }), s.ctx);
    expect(s.notes).toEqual([{ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: {}, _meta: { [SUB]: res.id } } }]);
    expect(res).toMatchObject({ result: { resultType: 'complete', _meta: { [SUB]: res.id } } });
  });

  it('fans unsolicited notifications out by filter, never progress or messages', async () => {
    const { bridge, link } = setup();
    const tools = stream();
    const docs = stream();
    void bridge.handle(listen({ toolsListChanged: true }), tools.ctx);
    void bridge.handle(listen({ resourceSubscriptions: ['x://1'] }), docs.ctx);
    await tick();
    const session = link.sessions[0];
    for (const n of [
      notification('notifications/tools/list_changed'),
      notification('notifications/resources/updated', { uri: 'x://1' }),
      notification('notifications/resources/updated', { uri: 'x://2' }),
      notification('notifications/prompts/list_changed'),
      notification('notifications/progress', { progressToken: 1, progress: 1 }),
      notification('notifications/message', { level: 'error', data: 'x' }),
    ]) session.unsolicited!.notification(n);
    expect(tools.notes.slice(1).map((n) => n.method)).toEqual(['notifications/tools/list_changed']);
    expect(docs.notes.slice(1)).toEqual([{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'x://1', _meta: { [SUB]: docs.notes[0].params!._meta![SUB] } } }]);
  });

  it('an update reaches only the listens whose subscription lives on the session that sent it', async () => {
    const { bridge, link } = setup();
    const plain = stream();
    const withRoots = stream();
    void bridge.handle(listen({ resourceSubscriptions: ['x://1'] }, {}), plain.ctx);
    void bridge.handle(listen({ resourceSubscriptions: ['x://1'] }, { roots: {} }), withRoots.ctx);
    await tick();
    expect(link.sessions.length).toBe(2); // one anchor per capability set
    const [s1, s2] = link.sessions;
    const mine = (x: ReturnType<typeof stream>) => x.notes.filter((n) => n.method === 'notifications/resources/updated').length;
    s1.unsolicited!.notification(notification('notifications/resources/updated', { uri: 'x://1' }));
    expect([mine(plain), mine(withRoots)]).toEqual(s1.init.capabilities.roots ? [0, 1] : [1, 0]);
    s2.unsolicited!.notification(notification('notifications/resources/updated', { uri: 'x://1' }));
    expect([mine(plain), mine(withRoots)]).toEqual([1, 1]);
  });

  it('when the anchor session dies, the URIs are subscribed again on a fresh one', async () => {
    const { bridge, link, upstreamCalls } = setup();
    const s = stream();
    void bridge.handle(listen({ resourceSubscriptions: ['x://1'] }), s.ctx);
    await tick();
    link.sessions[0].kill('child exited');
    await tick();
    await tick();
    expect(link.sessions.length).toBe(2);
    expect(upstreamCalls('resources/subscribe')).toEqual([{ uri: 'x://1' }, { uri: 'x://1' }]);
    link.sessions[1].unsolicited!.notification(notification('notifications/resources/updated', { uri: 'x://1' }));
    expect(s.notes.at(-1)).toMatchObject({ method: 'notifications/resources/updated', params: { uri: 'x://1' } });
  });

  it('bridge close ends every listen with its graceful result', async () => {
    const { bridge } = setup();
    const pending = [bridge.handle(listen({ toolsListChanged: true }), stream().ctx), bridge.handle(listen({ resourceSubscriptions: ['x://1'] }), stream().ctx)];
    await tick();
    expect(bridge.stats().listens).toBe(2);
    await bridge.close();
    const results = await Promise.all(pending);
    for (const r of results) expect(r).toMatchObject({ result: { resultType: 'complete', _meta: { [SUB]: r.id } } });
  });

  it('a missing filter is -32602', async () => {
    const { bridge } = setup();
    const res = await bridge.handle(listen(undefined), stream().ctx);
    expect('error' in res && res.error.code).toBe(-32602);
  });
});
