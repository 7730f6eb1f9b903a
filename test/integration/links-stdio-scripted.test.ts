import type { JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamInit } from '../../src/contracts/upstream.js';
import { BridgeError, RpcError } from '../../src/errors.js';
import { LegacyStdioLink } from '../../src/links/legacy-stdio-link.js';
import { createLogger, silentLogger } from '../../src/log.js';

/**
 * A small legacy stdio server, run as a real child, whose tools/call names pick
 * a behaviour: `ask` sends a server request and returns the client's response,
 * `batch` answers inside a JSON-RPC batch, `ask-then-cancel` cancels its own
 * request, `hold` never answers, `received` returns everything it was sent.
 */
const SCRIPTED_SERVER = String.raw`
const received = [];
const waiting = new Map();
const out = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const result = (id, r) => out({ jsonrpc: '2.0', id, result: r });
const text = (v) => ({ content: [{ type: 'text', text: JSON.stringify(v) }] });
let buf = '';
process.stdout.write('this line is not JSON\n');
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) { const line = buf.slice(0, i); buf = buf.slice(i + 1); handle(JSON.parse(line)); }
});
function handle(m) {
  received.push(m);
  if (m.id !== undefined && m.method === undefined) { const w = waiting.get(m.id); if (w) { waiting.delete(m.id); w(m); } return; }
  if (m.method === 'initialize') {
    if (process.env.REFUSE) return out({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'Unsupported protocol version', data: { supported: ['2024-11-05'] } } });
    return result(m.id, { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '0' } });
  }
  if (m.method !== 'tools/call') return;
  const args = m.params.arguments || {};
  const ask = (id, method, then) => { waiting.set(id, then); out({ jsonrpc: '2.0', id, method, params: {} }); };
  switch (m.params.name) {
    case 'ask': return ask(args.id, args.method, (resp) => result(m.id, text(resp)));
    case 'batch': return out([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'in a batch' } }, { jsonrpc: '2.0', id: m.id, result: text('batched') }]);
    case 'ask-then-cancel':
      // One pipe keeps these in order: the bridge sees the request, then its cancellation, then the result.
      ask('doomed', 'elicitation/create', () => {});
      out({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'doomed', reason: 'changed my mind' } });
      return result(m.id, text('done'));
    case 'hold': return;
    case 'received': return result(m.id, text(received));
  }
}
`;

const INIT: UpstreamInit = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'scripted-test', version: '1.0.0' } };
const links: LegacyStdioLink[] = [];

function scriptedLink(env: Record<string, string> = {}, script = SCRIPTED_SERVER): LegacyStdioLink {
  const link = new LegacyStdioLink({ command: process.execPath, args: ['-e', script], env, logger: silentLogger, shutdownGraceMs: 500 });
  links.push(link);
  return link;
}

function textOf(outcome: unknown): unknown {
  const r = (outcome as { result: { content: Array<{ text: string }> } }).result;
  return JSON.parse(r.content[0].text);
}

afterEach(async () => {
  await Promise.all(links.splice(0).map((l) => l.close()));
});

describe('PipeSession routing against a scripted stdio server', () => {
  it("answers the server's ping locally with {} and skips non-JSON stdout lines", async () => {
    const session = await scriptedLink().openSession(INIT);
    const asked: JSONRPCRequest[] = [];
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'ask', arguments: { id: 'p1', method: 'ping' } } },
      { onServerRequest: async (r) => (asked.push(r), {}) },
    );
    expect(textOf(outcome)).toEqual({ jsonrpc: '2.0', id: 'p1', result: {} });
    expect(asked).toEqual([]);
  });

  it('answers a server request with -32601 when no call is in flight and no unsolicited handler is set', async () => {
    const session = await scriptedLink().openSession(INIT);
    // The call has no onServerRequest, so the request is unsolicited.
    const outcome = await session.call({ method: 'tools/call', params: { name: 'ask', arguments: { id: 'r1', method: 'roots/list' } } });
    expect(textOf(outcome)).toMatchObject({ id: 'r1', error: { code: -32601, message: expect.stringContaining('roots/list') } });
  });

  it('sends a server request to the unsolicited handler when two calls with handlers are in flight', async () => {
    const session = await scriptedLink().openSession(INIT);
    const byCall: string[] = [];
    const unsolicited: string[] = [];
    session.setUnsolicitedHandlers({ notification: () => {}, request: async (r) => (unsolicited.push(r.method), { roots: [] }) });
    const hold = session.call({ method: 'tools/call', params: { name: 'hold' } }, { onServerRequest: async () => (byCall.push('hold'), {}) });
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'ask', arguments: { id: 'r2', method: 'roots/list' } } },
      { onServerRequest: async () => (byCall.push('ask'), {}) },
    );
    expect(textOf(outcome)).toEqual({ jsonrpc: '2.0', id: 'r2', result: { roots: [] } });
    expect(unsolicited).toEqual(['roots/list']);
    expect(byCall).toEqual([]);
    await session.close();
    expect(await hold).toMatchObject({ error: { code: -32603 } });
  });

  it('accepts a batch from the server: the response settles the call, the notification goes to the unsolicited handler', async () => {
    const session = await scriptedLink().openSession(INIT);
    const notes: string[] = [];
    session.setUnsolicitedHandlers({ notification: (n) => notes.push(n.method), request: async () => ({}) });
    expect(textOf(await session.call({ method: 'tools/call', params: { name: 'batch' } }))).toBe('batched');
    expect(notes).toEqual(['notifications/message']);
  });

  it('writes no late response to a server request the server cancelled, and tells the owning call', async () => {
    const session = await scriptedLink().openSession(INIT);
    const told: unknown[] = [];
    let answer!: (r: Record<string, unknown>) => void;
    const outcome = await session.call(
      { method: 'tools/call', params: { name: 'ask-then-cancel' } },
      {
        onServerRequest: () => new Promise((resolve) => (answer = resolve)),
        onNotification: (n) => {
          told.push(n.params);
          answer({ action: 'decline' });
        },
      },
    );
    expect(textOf(outcome)).toBe('done');
    expect(told).toEqual([{ requestId: 'doomed', reason: 'changed my mind' }]);
    const received = textOf(await session.call({ method: 'tools/call', params: { name: 'received' } })) as Array<{ id?: unknown }>;
    expect(received.some((m) => m.id === 'doomed')).toBe(false);
  });

  it('rejects openSession with the RpcError of a server that refuses initialize, and ends that child', async () => {
    const link = scriptedLink({ REFUSE: '1' });
    const err = await link.openSession(INIT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ code: -32602, message: 'Unsupported protocol version' });
    expect(link.pids()).toEqual([]);
  });
});

describe('LegacyStdioLink crash handling', () => {
  it('rejects with BridgeError for a command that cannot start', async () => {
    const link = new LegacyStdioLink({ command: 'mcp-bridge-no-such-command', args: [], logger: silentLogger });
    links.push(link);
    const err = await link.openSession(INIT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ code: 'BRIDGE_ERR_UPSTREAM_UNREACHABLE', message: expect.stringMatching(/ENOENT/) });
  });

  it('delays the next spawn once children keep dying right after start', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const logger = createLogger('warn', {}, (line) => void logged.push(JSON.parse(line) as Record<string, unknown>));
    const link = new LegacyStdioLink({ command: process.execPath, args: ['-e', 'process.exit(1)'], logger, shutdownGraceMs: 500 });
    links.push(link);
    const durations: number[] = [];
    const delays: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const before = logged.length;
      const t0 = performance.now();
      const err = await link.openSession(INIT).catch((e: unknown) => e);
      durations.push(performance.now() - t0);
      delays.push(logged.slice(before).find((r) => r.event === 'stdio.backoff')?.delayMs ?? 0);
      expect(err).toMatchObject({ code: 'BRIDGE_ERR_UPSTREAM_CLOSED', message: expect.stringMatching(/exited with code 1/) });
    }
    // Quick exits 0 and 1 respawn at once; then 250 ms, then 500 ms of backoff, each waited before the spawn.
    expect(delays).toEqual([0, 0, 250, 500]);
    expect(durations[2]).toBeGreaterThanOrEqual(245);
    expect(durations[3]).toBeGreaterThanOrEqual(495);
  });

  it('times each call out at its own deadline, whatever the order they were sent in, and tells the server each time', async () => {
    const session = await scriptedLink().openSession(INIT);
    const hold = { method: 'tools/call', params: { name: 'hold', arguments: {} } };
    const started = performance.now();
    const settled: number[] = [];
    const timed = (timeoutMs: number) => session.call(hold, { timeoutMs }).then((outcome) => (settled.push(timeoutMs), { outcome, ms: performance.now() - started }));
    // An answered call among them keeps its answer; its deadline is generous so a loaded machine cannot trip it.
    const [slow, fast, answered, fast2] = await Promise.all([timed(600), timed(150), session.call({ method: 'tools/call', params: { name: 'received', arguments: {} } }, { timeoutMs: 10_000 }), timed(300)]);
    expect('result' in answered).toBe(true);
    expect(fast.outcome).toEqual({ error: { code: -32603, message: 'upstream tools/call timed out after 150 ms', data: { bridgeCode: 'BRIDGE_ERR_TIMEOUT' } } });
    expect(fast2.outcome).toMatchObject({ error: { message: 'upstream tools/call timed out after 300 ms' } });
    expect(slow.outcome).toMatchObject({ error: { message: 'upstream tools/call timed out after 600 ms' } });
    // Never early, and in deadline order rather than send order (a late timer can only delay, not reorder).
    expect(fast.ms).toBeGreaterThanOrEqual(145);
    expect(fast2.ms).toBeGreaterThanOrEqual(295);
    expect(slow.ms).toBeGreaterThanOrEqual(595);
    expect(settled).toEqual([150, 300, 600]);
    const seen = textOf(await session.call({ method: 'tools/call', params: { name: 'received', arguments: {} } })) as Array<{ method?: string; params?: { reason?: string } }>;
    const reasons = seen.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.reason);
    expect(reasons).toEqual(['timed out after 150 ms', 'timed out after 300 ms', 'timed out after 600 ms']);
  });

  it('close() ends every child and rejects a later openSession', async () => {
    const link = scriptedLink();
    await Promise.all([link.openSession(INIT), link.openSession(INIT)]);
    const pids = link.pids();
    expect(pids).toHaveLength(2);
    await link.close();
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    await expect(link.openSession(INIT)).rejects.toMatchObject({ code: 'BRIDGE_ERR_CLOSED' });
  });
});
