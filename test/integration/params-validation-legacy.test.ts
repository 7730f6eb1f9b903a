import { fromJsonSchema } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { openRawLegacySession, readMessages, type RawLegacySession } from '../helpers/faults.js';
import { startRecordingV1Server, startRecordingV2Server, type RecordingServer } from '../helpers/recording-servers.js';

/**
 * Malformed params from an initialize-era client are refused by the bridge's
 * legacy face, on its own conventions (in-band, HTTP 200, as SDK v1 servers
 * answer -32602), before they reach a modern upstream (l2m) or a legacy one
 * (l2l). The bodies are hand-written JSON: SDK clients refuse to send them.
 */

let nextId = 1;

/** [method, params, field the error must name] */
const BAD: Array<[string, Record<string, unknown> | undefined, string]> = [
  ['tools/call', { name: 'echo', arguments: 'hello' }, 'params.arguments'],
  ['tools/call', { arguments: {} }, 'params.name'],
  ['tools/call', undefined, 'params.name'],
  ['prompts/get', { name: 'greet', arguments: { who: 7 } }, 'params.arguments.who'],
  ['resources/read', { uri: ['x'] }, 'params.uri'],
  ['resources/subscribe', { uri: 1 }, 'params.uri'],
  ['tools/list', { cursor: 9 }, 'params.cursor'],
];

function suite(name: string, start: () => Promise<RecordingServer>) {
  describe(name, () => {
    let upstream: RecordingServer;
    let bridge: RunningCli;
    let session: RawLegacySession;
    beforeAll(async () => {
      upstream = await start();
      bridge = await startCli(['--upstream', upstream.url]);
      session = await openRawLegacySession(bridge.url);
    });
    afterAll(async () => {
      await session?.end().catch(() => 0);
      await bridge?.close();
      await upstream?.close();
    });

    async function call(method: string, params: Record<string, unknown> | undefined) {
      const id = nextId++;
      const res = await session.post(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
      const reply = (await readMessages(res)).find((m) => m.id === id) as { error?: { code: number; message: string; data?: unknown }; result?: { content?: unknown } };
      return { status: res.status, reply };
    }

    it.each(BAD)('%s %j → in-band -32602 naming %s, nothing upstream', async (method, params, field) => {
      const before = upstream.methods.filter((m) => m === method).length;
      const { status, reply } = await call(method, params);
      expect(status).toBe(200);
      expect(reply.error?.code).toBe(-32602);
      expect(reply.error?.message).toContain(field);
      expect(reply.error?.data).toMatchObject({ field });
      // A good call afterwards reaches the upstream, so "not there" is not "not yet".
      const good = await call('tools/call', { name: 'echo', arguments: { text: 'ok' } });
      expect(good.reply.result?.content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(upstream.methods.filter((m) => m === method).length).toBe(method === 'tools/call' ? before + 1 : before);
    });
  });
}

suite('legacy client → modern server (SDK v2, l2m)', () =>
  startRecordingV2Server((mcp) => {
    mcp.registerTool('echo', { inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } } }) }, async (args: unknown) => ({
      content: [{ type: 'text', text: String((args as { text?: unknown }).text) }],
    }));
  }),
);

suite('legacy client → legacy server (SDK v1, l2l)', () =>
  startRecordingV1Server((mcp) => {
    mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  }),
);
