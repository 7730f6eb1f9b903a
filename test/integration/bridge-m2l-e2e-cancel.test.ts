import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/daemon/start-bridge.js';
import { modernClient, startDaemon, textOf } from './bridge-m2l-e2e-shared.js';

/**
 * A modern client that gives up on a call (aborts its request, so the HTTP
 * face sees the stream close) must reach the legacy server as
 * `notifications/cancelled` (digest §5.5). The upstream is a tiny scripted
 * stdio server that never answers `slow` and reports the ids of the `slow`
 * calls and the cancellations it got.
 */
const SCRIPTED_SERVER = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const cancelled = [];
const slowIds = [];
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') return reply(m.id, { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'scripted-stdio', version: '1.0.0' } });
  if (m.method === 'notifications/cancelled') return void cancelled.push(m.params);
  if (m.method === 'tools/list') return reply(m.id, { tools: [{ name: 'slow', inputSchema: { type: 'object' } }, { name: 'cancelled', inputSchema: { type: 'object' } }] });
  // slow never answers; its progress says the call has arrived.
  if (m.method === 'tools/call' && m.params.name === 'slow') return slowIds.push(m.id), send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: m.params._meta.progressToken, progress: 1 } });
  if (m.method === 'tools/call' && m.params.name === 'cancelled') return reply(m.id, { content: [{ type: 'text', text: JSON.stringify({ cancelled, slowIds }) }] });
  if (m.id !== undefined && m.method) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
});
`;

describe('e2e: a modern client aborting a call → notifications/cancelled reaches the legacy stdio server', () => {
  let daemon: RunningBridge;
  let client: Client;
  beforeAll(async () => {
    daemon = await startDaemon({ kind: 'command', command: process.execPath, args: ['-e', SCRIPTED_SERVER] });
    client = await modernClient(daemon.url!);
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.close();
  });

  it('the aborted call is cancelled upstream with the id the bridge used there', async () => {
    const ac = new AbortController();
    // Abort once the server has the call (its progress arrived), not on a timer a slow spawn could outrun.
    const call = client.callTool({ name: 'slow', arguments: {} }, { signal: ac.signal, onprogress: () => ac.abort() });
    await expect(call).rejects.toThrow();
    let seen: { cancelled: Array<{ requestId: unknown; reason?: string }>; slowIds: unknown[] } = { cancelled: [], slowIds: [] };
    for (let i = 0; i < 200 && seen.cancelled.length === 0; i++) {
      seen = JSON.parse(textOf(await client.callTool({ name: 'cancelled', arguments: {} })));
      if (seen.cancelled.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    // One slow call reached the server, and the one cancellation names exactly that call's upstream id.
    expect(seen.slowIds).toHaveLength(1);
    expect(seen.cancelled).toHaveLength(1);
    expect(seen.cancelled[0].requestId).toBe(seen.slowIds[0]);
  });
});
