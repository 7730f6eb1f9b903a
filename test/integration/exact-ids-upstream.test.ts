import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { httpRequest } from '../helpers/raw-http.js';
import { until } from './accept-helpers.js';
import { ACCEPT_BOTH, BIG_ID_SERVER, carriesId, FIXTURES, initialize, INITIALIZED, meta, MODERN, portOf, RawInbox } from './exact-ids-faces.js';

/**
 * Issue 11, the ids that travel the other way: an upstream's own server→client
 * request under an id past 2^53 gets its answer under that id, byte-identical
 * (legacy-to-legacy over WebSocket, modern-to-legacy through MRTR), and a
 * client's notifications/cancelled naming a big id cancels that very call.
 */

describe('exact ids: a server→client request under a big id maps back (scripted stdio upstream)', () => {
  let cli: RunningCli;

  beforeAll(async () => {
    cli = await startCli(['--log-level', 'warn', '--', ...BIG_ID_SERVER]);
  });

  afterAll(async () => {
    await cli?.close();
  });

  it('legacy-to-legacy: the client answers the bridge’s id; the upstream gets its own 9007199254740993 back, byte-identical', async () => {
    const ws = new WebSocket(`${cli.url.replace('http', 'ws')}/ws`, 'mcp');
    const inbox = new RawInbox();
    ws.on('message', (data) => inbox.push(String(data)));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      ws.send(initialize({ sampling: {} }));
      await inbox.next((t) => carriesId(t, '0'));
      ws.send(INITIALIZED);
      ws.send('{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/call","params":{"name":"ask","arguments":{}}}');
      const asked = JSON.parse(await inbox.next((t) => t.includes('sampling/createMessage'))) as { id: unknown };
      // The client sees an id the bridge minted, not the upstream's.
      expect(typeof asked.id).toBe('string');
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: asked.id, result: { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' } }));
      const answer = await inbox.next((t) => carriesId(t, '12345678901234567890123'));
      const seen = (JSON.parse(answer) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
      expect(carriesId(seen, '9007199254740993'), seen).toBe(true);
      expect(seen).toContain('"model":"m"');
    } finally {
      ws.close();
    }
  });

  it('modern-to-legacy: the request becomes an input request; the retry’s answer reaches the upstream under 9007199254740993', async () => {
    const caps = { sampling: {} };
    const post = (token: string, params: Record<string, unknown>) =>
      httpRequest(portOf(cli.url), {
        method: 'POST',
        path: '/mcp',
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ask' },
        body: `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":${JSON.stringify({ name: 'ask', arguments: {}, ...params, _meta: { ...meta, 'io.modelcontextprotocol/clientCapabilities': caps } })}}`,
      }, 15_000);
    const first = await post('12345678901234567890123', {});
    expect(carriesId(first.body, '12345678901234567890123'), first.body).toBe(true);
    const parked = (JSON.parse(first.body) as { result: { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string } }).result;
    expect(parked.resultType).toBe('input_required');
    const [key, entry] = Object.entries(parked.inputRequests)[0]!;
    expect(entry.method).toBe('sampling/createMessage');
    const inputResponses = { [key]: { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' } };
    const final = await post('-9007199254740993', { inputResponses, requestState: parked.requestState });
    expect(carriesId(final.body, '-9007199254740993'), final.body).toBe(true);
    const seen = (JSON.parse(final.body) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
    expect(carriesId(seen, '9007199254740993'), seen).toBe(true);
    expect(seen).toContain('"model":"m"');
  });
});

describe('exact ids: a cancel names a big id (legacy-to-legacy, SDK v1 stdio upstream)', () => {
  let cli: RunningCli;

  beforeAll(async () => {
    cli = await startCli(['--log-level', 'warn', '--', process.execPath, path.join(FIXTURES, 'fault-server.mjs')]);
  });

  afterAll(async () => {
    await cli?.close();
  });

  it('notifications/cancelled with requestId 9007199254740993 cancels that call upstream', async () => {
    const ws = new WebSocket(`${cli.url.replace('http', 'ws')}/ws`, 'mcp');
    const inbox = new RawInbox();
    ws.on('message', (data) => inbox.push(String(data)));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    try {
      ws.send(initialize());
      await inbox.next((t) => carriesId(t, '0'));
      ws.send(INITIALIZED);
      ws.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"hang","arguments":{}}}');
      await until(() => /hang started \d+/.test(cli.stderr()));
      ws.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"exact"}}');
      await until(() => /cancelled hang \d+ reason=cancelled by the client/.test(cli.stderr())).catch((err) => { throw new Error(`${err.message}\n${cli.stderr()}`); });
    } finally {
      ws.close();
    }
  });
});
