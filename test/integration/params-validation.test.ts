import { fromJsonSchema } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { httpRequest } from '../helpers/raw-http.js';
import { rawEverythingLines, type StdioLines } from './accept-helpers.js';
import { startRecordingV1Server, startRecordingV2Server, type RecordingServer } from '../helpers/recording-servers.js';

/**
 * Malformed params from a 2026-07-28 client are refused by the bridge's modern
 * face itself, in front of a legacy (SDK v1) and a modern (SDK v2) server:
 * HTTP 400, -32602 whose message and data name the field, and the request
 * never reaches the upstream. Raw HTTP, because SDK clients refuse to send it.
 */

const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

let nextId = 1;

/** A modern POST with correct standard headers (Mcp-Name only when the body has a string name/uri). */
function post(bridge: RunningCli, method: string, params: Record<string, unknown>) {
  const port = Number(new URL(bridge.url).port);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
  };
  const named = method === 'resources/read' ? params.uri : params.name;
  if (typeof named === 'string') headers['mcp-name'] = named;
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } });
  return httpRequest(port, { method: 'POST', path: '/mcp', headers, body });
}

/** [method, params, field the error must name] */
const BAD: Array<[string, Record<string, unknown>, string]> = [
  ['tools/call', { name: 'echo', arguments: 'hello' }, 'params.arguments'],
  ['tools/call', { name: 'echo', arguments: [1] }, 'params.arguments'],
  ['tools/call', { arguments: {} }, 'params.name'],
  ['tools/call', { name: 42, arguments: {} }, 'params.name'],
  ['tools/call', { name: 'echo', arguments: {}, inputResponses: null }, 'params.inputResponses'],
  ['tools/call', { name: 'echo', arguments: {}, inputResponses: { k: 1 } }, 'params.inputResponses.k'],
  ['tools/call', { name: 'echo', arguments: {}, requestState: 7 }, 'params.requestState'],
  ['prompts/get', { name: 'greet', arguments: { who: 1 } }, 'params.arguments.who'],
  ['prompts/get', { name: 'greet', arguments: 'x' }, 'params.arguments'],
  ['prompts/get', { arguments: {} }, 'params.name'],
  ['resources/read', { uri: 5 }, 'params.uri'],
  ['resources/read', {}, 'params.uri'],
  ['tools/list', { cursor: 5 }, 'params.cursor'],
  ['prompts/list', { cursor: {} }, 'params.cursor'],
  ['resources/list', { cursor: false }, 'params.cursor'],
  ['resources/templates/list', { cursor: [] }, 'params.cursor'],
  ['completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who' } }, 'params.argument.value'],
  ['subscriptions/listen', { notifications: { toolsListChanged: 'yes' } }, 'params.notifications.toolsListChanged'],
];

function suite(name: string, start: () => Promise<RecordingServer>) {
  describe(name, () => {
    let upstream: RecordingServer;
    let bridge: RunningCli;
    beforeAll(async () => {
      upstream = await start();
      bridge = await startCli(['--upstream', upstream.url]);
    });
    afterAll(async () => {
      await bridge?.close();
      await upstream?.close();
    });

    it.each(BAD)('%s %j → 400 -32602 naming %s, nothing upstream', async (method, params, field) => {
      const before = upstream.methods.filter((m) => m === method).length;
      const res = await post(bridge, method, params);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe(-32602);
      expect(res.json.error.message).toContain(field);
      expect(res.json.error.data).toMatchObject({ field });
      // The good call below reaches the upstream, so "not there" is not "not yet".
      const good = await post(bridge, 'tools/call', { name: 'echo', arguments: { text: 'ok' } });
      expect(good.status).toBe(200);
      expect(good.json.result.content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(upstream.methods.filter((m) => m === method).length).toBe(method === 'tools/call' ? before + 1 : before);
    });
  });
}

suite('modern client → legacy server (SDK v1)', () =>
  startRecordingV1Server((mcp) => {
    mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    mcp.registerPrompt('greet', { argsSchema: { who: z.string() } }, async ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `hi ${who}` } }] }));
  }),
);

suite('modern client → modern server (SDK v2)', () =>
  startRecordingV2Server((mcp) => {
    mcp.registerTool('echo', { inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } } }) }, async (args: unknown) => ({
      content: [{ type: 'text', text: String((args as { text?: unknown }).text) }],
    }));
  }),
);

describe('modern client over --stdio → server-everything (stdio)', () => {
  let io: StdioLines;
  rawEverythingLines((lines) => (io = lines));

  it.each([
    ['tools/call', { name: 'echo', arguments: 'hello' }, 'params.arguments'],
    ['prompts/get', { name: 'simple-prompt', arguments: { a: 1 } }, 'params.arguments.a'],
    ['resources/read', { uri: 1 }, 'params.uri'],
  ])('%s %j → -32602 naming %s', async (method, params, field) => {
    const reply = await io.request(`bad-${nextId++}`, method, params);
    expect(reply.error).toMatchObject({ code: -32602, data: { field } });
    expect((reply.error as { message: string }).message).toContain(field);
  });

  it('a well-formed call on the same line still works', async () => {
    const reply = await io.request(`good-${nextId++}`, 'tools/call', { name: 'echo', arguments: { message: 'fine' } });
    expect(JSON.stringify((reply.result as { content: unknown }).content)).toContain('fine');
  });
});
