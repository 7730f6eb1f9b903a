import { afterAll, describe, expect, it } from 'vitest';
import { startEverything, type RunningServer } from '../helpers/processes.js';

describe('test harness: server-everything on loopback', () => {
  const running: RunningServer[] = [];
  afterAll(async () => Promise.all(running.map((s) => s.close())));

  it('streamableHttp mode listens on 127.0.0.1 only and answers an initialize', async () => {
    const s = await startEverything('streamableHttp');
    running.push(s);
    const res = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeTruthy();
    expect(await res.text()).toContain('mcp-servers/everything');
  });

  it('sse mode sends an endpoint event first', async () => {
    const s = await startEverything('sse');
    running.push(s);
    const ac = new AbortController();
    const res = await fetch(`${s.url}/sse`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    ac.abort();
    expect(new TextDecoder().decode(value)).toMatch(/event: endpoint\ndata: \/message\?sessionId=/);
  });
});
