import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { modernPost, readMessages } from '../helpers/faults.js';

/**
 * MRTR input validation and unknown keys through the built bridge, in front of
 * the conformance suite's legacy fixture (SDK v1 McpServer over stdio) whose
 * tool asks one elicitation/create: the 2026-07-28 SHOULDs that the scenarios
 * input-required-result-ignore-extra-params and -validate-input check.
 */

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'conformance', 'legacy-fixture', 'server.mjs');
const TOOL = 'test_input_required_result_elicitation';
const CAPS = { elicitation: {} };

type Obj = Record<string, any>;
let nextId = 1;

async function call(bridge: RunningCli, params: Obj): Promise<{ status: number; reply: Obj }> {
  const id = nextId++;
  const res = await modernPost(bridge.url, id, 'tools/call', {
    name: TOOL,
    arguments: {},
    ...params,
    _meta: { 'io.modelcontextprotocol/clientCapabilities': CAPS },
  });
  const reply = (await readMessages(res)).find((m) => m.id === id) as Obj;
  return { status: res.status, reply };
}

describe('MRTR inputResponses in front of a legacy server', () => {
  let bridge: RunningCli;
  beforeAll(async () => {
    bridge = await startCli(['--', process.execPath, FIXTURE, 'stdio']);
  });
  afterAll(async () => {
    await bridge?.close();
  });

  it('a retry with its key, its requestState and unknown extra keys completes: the extra keys are ignored', async () => {
    const first = await call(bridge, {});
    expect(first.reply.result.resultType).toBe('input_required');
    const [key] = Object.keys(first.reply.result.inputRequests);
    expect(first.reply.result.inputRequests[key!].method).toBe('elicitation/create');
    const done = await call(bridge, {
      inputResponses: {
        [key!]: { action: 'accept', content: { name: 'Alice' } },
        unknown_extra_key: { action: 'accept', content: { foo: 'bar' } },
        another_unexpected: { action: 'accept', content: { baz: 123 } },
      },
      requestState: first.reply.result.requestState,
    });
    expect(done.reply.result.resultType).toBe('complete');
    expect(JSON.stringify(done.reply.result.content)).toContain('Alice');
  });

  it('answers under keys the bridge never issued, without requestState, are ignored: the input is asked for', async () => {
    const r = await call(bridge, { inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } } });
    expect(r.reply.result.resultType).toBe('input_required');
    expect(Object.values(r.reply.result.inputRequests as Obj).map((e: Obj) => e.method)).toEqual(['elicitation/create']);
  });

  it.each([
    ['a number as an input response', { inputResponses: { user_name: 12345 } }, 'params.inputResponses.user_name'],
    ['null inputResponses', { inputResponses: null }, 'params.inputResponses'],
    ['an array of inputResponses', { inputResponses: [{ action: 'accept' }] }, 'params.inputResponses'],
    ['a numeric requestState', { inputResponses: {}, requestState: 1 }, 'params.requestState'],
  ])('%s → 400 -32602 naming %s', async (_name, params, field) => {
    const r = await call(bridge, params);
    expect(r.status).toBe(400);
    expect(r.reply.error).toMatchObject({ code: -32602, data: { field } });
  });
});
