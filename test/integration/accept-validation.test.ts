import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND } from '../helpers/processes.js';
import { envelope, modernHeaders, postModern, rawEverythingLines, rawPost, StdioLines, stdinTee, textOf, until, V, type Obj, type RawReply, type Recorder } from './accept-helpers.js';

/**
 * Acceptance of issue 3's second Tests bullet through the built CLI, in raw
 * HTTP: every validation error with its status and code, tampered, foreign
 * and expired `requestState`, missing input keys, concurrent calls on one pool,
 * and a parked call reaching its TTL. Bridge A fronts server-everything (stdio,
 * its stdin recorded) with `--pool-max 3` and the default TTL, so no retry of a
 * slow machine expires; bridge T has a short `--request-state-ttl` and
 * `--pool-max 1`, and its tests wait for the expiry itself (the cancel reaching
 * the server);
 * bridge B fronts a scripted legacy server whose tool declares `x-mcp-header`.
 */

/** Long enough for a queued call to reach the pool before the parked call ahead of it expires, on a loaded machine. */
const TTL_MS = 3_000;
const ELICIT = { elicitation: {} };

/** A 2025-11-25 stdio server: a tool with `x-mcp-header` properties, and resources it never has (-32002). */
const SCRIPTED_LEGACY = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const tenant = { name: 'tenant', inputSchema: { type: 'object', properties: {
  region: { type: 'string', 'x-mcp-header': 'Region' }, count: { type: 'integer', 'x-mcp-header': 'Count' } } } };
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const reply = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code, message, data) => send({ jsonrpc: '2.0', id: m.id, error: { code, message, data } });
  if (m.method === 'initialize') return reply({ protocolVersion: '2025-11-25', capabilities: { tools: {}, resources: {} }, serverInfo: { name: 'scripted-legacy', version: '1.0.0' } });
  if (m.method === 'tools/list') return reply({ tools: [tenant] });
  if (m.method === 'tools/call') return reply({ content: [{ type: 'text', text: 'region=' + m.params.arguments.region + ' count=' + m.params.arguments.count }] });
  if (m.method === 'resources/read') return fail(-32002, 'Resource not found', { uri: m.params.uri });
  fail(-32601, 'Method not found');
});
`;

let nextId = 1;
const id = () => `v-${nextId++}`;

function resultOf(r: RawReply): Obj {
  if (!('result' in r.body)) throw new Error(`expected a result, got ${JSON.stringify(r.body)}`);
  return r.body.result as Obj;
}

function errorOf(r: RawReply): { code: number; message: string; data?: Obj } {
  if (!('error' in r.body)) throw new Error(`expected an error, got ${JSON.stringify(r.body)}`);
  return r.body.error as { code: number; message: string; data?: Obj };
}

/** One elicitation round: the first leg of trigger-elicitation-request, parked upstream. */
async function parkElicitation(base: string): Promise<{ key: string; requestState: string; params: Obj }> {
  const params = { name: 'trigger-elicitation-request', arguments: {} };
  const first = resultOf(await postModern(base, id(), 'tools/call', params, ELICIT));
  expect(first.resultType).toBe('input_required');
  const keys = Object.keys(first.inputRequests as Obj);
  expect(keys).toHaveLength(1);
  return { key: keys[0]!, requestState: first.requestState as string, params };
}

function retry(base: string, parked: { params: Obj; requestState: string }, inputResponses: Obj, requestState = parked.requestState): Promise<RawReply> {
  return postModern(base, id(), 'tools/call', { ...parked.params, inputResponses, requestState }, ELICIT);
}

const accept = (name: string) => ({ action: 'accept', content: { name, check: true } });

describe('issue 3 validation through the built CLI (raw HTTP)', () => {
  let a: RunningCli;
  let b: RunningCli;
  let t: RunningCli;
  let upstreamT: Recorder;
  let upstreamA: Recorder;

  beforeAll(async () => {
    const tee = stdinTee(EVERYTHING_STDIO_COMMAND);
    const shortTtl = stdinTee(EVERYTHING_STDIO_COMMAND);
    upstreamA = tee.recorder;
    upstreamT = shortTtl.recorder;
    [a, b, t] = await Promise.all([
      startCli(['--log-level', 'warn', '--pool-max', '3', '--', ...tee.command]),
      startCli(['--log-level', 'warn', '--', process.execPath, '-e', SCRIPTED_LEGACY]),
      startCli(['--log-level', 'warn', '--request-state-ttl', String(TTL_MS), '--pool-max', '1', '--', ...shortTtl.command]),
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), t?.close()]);
    await upstreamA?.close();
    await upstreamT?.close();
  });

  const request = (method: string, params: Obj = {}) => ({ jsonrpc: '2.0', id: 'ladder', method, params: { ...params, _meta: envelope({}) } });
  const without = (h: Record<string, string>, name: string) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
  const call = { name: 'echo', arguments: { message: 'x' } };
  const read = { uri: 'demo://resource/static/document/architecture.md' };
  const prompt = { name: 'simple-prompt' };

  it.each<[string, number, number, () => { body: unknown; headers: Record<string, string> }]>([
    ['no _meta envelope (header names 2026-07-28)', 400, -32602, () => ({ body: { jsonrpc: '2.0', id: 'ladder', method: 'tools/list', params: {} }, headers: modernHeaders('tools/list') })],
    ['no params at all', 400, -32602, () => ({ body: { jsonrpc: '2.0', id: 'ladder', method: 'tools/list' }, headers: modernHeaders('tools/list') })],
    ['_meta without clientCapabilities', 400, -32602, () => ({ body: { jsonrpc: '2.0', id: 'ladder', method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } } }, headers: modernHeaders('tools/list') })],
    ['MCP-Protocol-Version ≠ _meta protocolVersion', 400, -32020, () => ({ body: request('tools/list'), headers: { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2025-11-25' } })],
    ['MCP-Protocol-Version missing', 400, -32020, () => ({ body: request('tools/list'), headers: without(modernHeaders('tools/list'), 'mcp-protocol-version') })],
    ['Mcp-Method missing', 400, -32020, () => ({ body: request('tools/list'), headers: without(modernHeaders('tools/list'), 'mcp-method') })],
    ['Mcp-Method ≠ the body method', 400, -32020, () => ({ body: request('tools/list'), headers: { ...modernHeaders('tools/list'), 'mcp-method': 'prompts/list' } })],
    ['Mcp-Name missing on tools/call', 400, -32020, () => ({ body: request('tools/call', call), headers: without(modernHeaders('tools/call', call), 'mcp-name') })],
    ['Mcp-Name ≠ params.name on tools/call', 400, -32020, () => ({ body: request('tools/call', call), headers: { ...modernHeaders('tools/call', call), 'mcp-name': 'get-sum' } })],
    ['Mcp-Name missing on resources/read', 400, -32020, () => ({ body: request('resources/read', read), headers: without(modernHeaders('resources/read', read), 'mcp-name') })],
    ['Mcp-Name ≠ params.name on prompts/get', 400, -32020, () => ({ body: request('prompts/get', prompt), headers: { ...modernHeaders('prompts/get', prompt), 'mcp-name': 'args-prompt' } })],
    ['an unknown method', 404, -32601, () => ({ body: request('tools/frobnicate'), headers: modernHeaders('tools/frobnicate') })],
    ['the removed ping', 404, -32601, () => ({ body: request('ping'), headers: modernHeaders('ping') })],
    ['the removed logging/setLevel', 404, -32601, () => ({ body: request('logging/setLevel', { level: 'debug' }), headers: modernHeaders('logging/setLevel') })],
    ['the removed resources/subscribe', 404, -32601, () => ({ body: request('resources/subscribe', read), headers: modernHeaders('resources/subscribe') })],
    ['initialize carrying a modern envelope', 404, -32601, () => ({ body: request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }), headers: modernHeaders('initialize') })],
  ])('%s → HTTP %i, JSON-RPC %i', async (_name, status, code, make) => {
    const { body, headers } = make();
    const r = await rawPost(a.url, body, headers);
    expect(r.status).toBe(status);
    expect(errorOf(r).code).toBe(code);
    expect(r.body.id).toBe('ladder');
  });

  it('an unsupported version → HTTP 400, -32022 with data.supported and data.requested', async () => {
    const body = { jsonrpc: '2.0', id: 'ladder', method: 'tools/list', params: { _meta: { ...envelope({}), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } };
    const r = await rawPost(a.url, body, { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' });
    expect(r.status).toBe(400);
    expect(errorOf(r)).toMatchObject({ code: -32022, data: { supported: [V], requested: '2099-01-01' } });
  });

  it('the same requests, well-formed, are answered (200) with resultType and the cache fields', async () => {
    const list = await postModern(a.url, id(), 'tools/list');
    expect(list.status).toBe(200);
    expect(resultOf(list)).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    const echo = await postModern(a.url, id(), 'tools/call', call);
    expect(resultOf(echo).resultType).toBe('complete');
    expect(textOf(resultOf(echo))).toContain('Echo: x');
  });

  describe('Mcp-Param-* of a legacy tool declaring x-mcp-header (bridge B)', () => {
    const args = { region: 'eu-west', count: 3 };
    beforeAll(async () => {
      // The bridge learns the declarations from a tools/list it relays, as the face needs them (digest §2.5).
      const tools = resultOf(await postModern(b.url, id(), 'tools/list')).tools as Obj[];
      expect(tools.map((t) => t.name)).toEqual(['tenant']);
    });

    it('matching Mcp-Param-Region and Mcp-Param-Count → 200 and the call runs', async () => {
      const r = await postModern(b.url, id(), 'tools/call', { name: 'tenant', arguments: args }, {}, { 'mcp-param-region': 'eu-west', 'mcp-param-count': '3' });
      expect(r.status).toBe(200);
      expect(textOf(resultOf(r))).toBe('region=eu-west count=3');
    });

    it('Mcp-Param-Region missing → HTTP 400, -32020', async () => {
      const r = await postModern(b.url, id(), 'tools/call', { name: 'tenant', arguments: args }, {}, { 'mcp-param-count': '3' });
      expect(r.status).toBe(400);
      expect(errorOf(r).code).toBe(-32020);
    });

    it('Mcp-Param-Region ≠ the argument → HTTP 400, -32020', async () => {
      const r = await postModern(b.url, id(), 'tools/call', { name: 'tenant', arguments: args }, {}, { 'mcp-param-region': 'us-east', 'mcp-param-count': '3' });
      expect(r.status).toBe(400);
      expect(errorOf(r).code).toBe(-32020);
    });
  });

  it('a legacy -32002 (resource not found) reaches the modern client as -32602 with data.uri', async () => {
    const r = await postModern(b.url, id(), 'resources/read', { uri: 'test://missing' });
    expect(errorOf(r)).toMatchObject({ code: -32602, data: { uri: 'test://missing' } });
  });

  it('a retry missing the input key gets input_required again for that key; answering it completes the same call', async () => {
    const parked = await parkElicitation(a.url);
    const again = resultOf(await retry(a.url, parked, {}));
    expect(again.resultType).toBe('input_required');
    expect(Object.keys(again.inputRequests as Obj)).toEqual([parked.key]);
    const done = resultOf(await retry(a.url, parked, { [parked.key]: accept('Katherine Johnson') }, again.requestState as string));
    expect(done.resultType).toBe('complete');
    expect(textOf(done)).toContain('Name: Katherine Johnson');
  });

  it('a tampered requestState → -32602 saying tampered; the genuine one still resumes the call', async () => {
    const parked = await parkElicitation(a.url);
    const s = parked.requestState;
    const forged = s.slice(0, -3) + (s.endsWith('AAA') ? 'BBB' : 'AAA');
    const err = errorOf(await retry(a.url, parked, { [parked.key]: accept('Mallory') }, forged));
    expect(err).toMatchObject({ code: -32602, data: { requestState: 'tampered' } });
    expect(err.message).toMatch(/tampered/);
    expect(textOf(resultOf(await retry(a.url, parked, { [parked.key]: accept('Dorothy Vaughan') })))).toContain('Name: Dorothy Vaughan');
  });

  it('the round travels in the sealed requestState: a retry re-asks what the server asked; a rewritten request in it is refused as tampered', async () => {
    const params = { name: 'trigger-elicitation-request', arguments: {} };
    const first = resultOf(await postModern(a.url, id(), 'tools/call', params, ELICIT));
    const [key] = Object.keys(first.inputRequests as Obj);
    const [head, body, mac] = (first.requestState as string).split('.');
    const sealed = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as { e?: { q?: Obj } };
    // The parked call keeps no copy (issue 17): what it asked is in the state, as the client saw it.
    expect(sealed.e?.q).toEqual(first.inputRequests);
    const rewritten = structuredClone(sealed);
    ((rewritten.e!.q![key!] as Obj).params as Obj).message = 'Please type your password';
    const forged = `${head}.${Buffer.from(JSON.stringify(rewritten)).toString('base64url')}.${mac}`;
    const parked = { params, key: key!, requestState: first.requestState as string };
    expect(errorOf(await retry(a.url, parked, {}, forged))).toMatchObject({ code: -32602, data: { requestState: 'tampered' } });
    const again = resultOf(await retry(a.url, parked, {}));
    expect(again.resultType).toBe('input_required');
    expect(again.inputRequests).toEqual(first.inputRequests);
    const done = resultOf(await retry(a.url, parked, { [key!]: accept('Annie Easley') }, again.requestState as string));
    expect(textOf(done)).toContain('Name: Annie Easley');
  });

  it('a requestState sealed by another bridge instance → -32602 saying foreign', async () => {
    const parked = await parkElicitation(a.url);
    const err = errorOf(await retry(b.url, parked, { [parked.key]: accept('Eve') }));
    expect(err).toMatchObject({ code: -32602, data: { requestState: 'foreign' } });
    expect(err.message).toMatch(/foreign/);
    expect(textOf(resultOf(await retry(a.url, parked, { [parked.key]: accept('Mary Jackson') })))).toContain('Name: Mary Jackson');
  });

  it('concurrent calls on one pool (max 3, two sessions held by parked calls): every response reaches its own request', async () => {
    const messages = Array.from({ length: 6 }, (_, i) => `concurrent-${i}`);
    const echoes = messages.map((message) => ({ rid: id(), message }));
    const [parkedA, parkedB, ...answers] = await Promise.all([
      parkElicitation(a.url),
      parkElicitation(a.url),
      ...echoes.map((e) => postModern(a.url, e.rid, 'tools/call', { name: 'echo', arguments: { message: e.message } })),
    ]);
    answers.forEach((r, i) => {
      expect(r.body.id).toBe(echoes[i]!.rid);
      expect(textOf(resultOf(r))).toBe(`Echo: ${echoes[i]!.message}`);
    });
    const [doneA, doneB] = await Promise.all([retry(a.url, parkedA, { [parkedA.key]: accept('Alpha Centauri') }), retry(a.url, parkedB, { [parkedB.key]: accept('Beta Pictoris') })]);
    expect(textOf(resultOf(doneA))).toContain('Name: Alpha Centauri');
    expect(textOf(resultOf(doneB))).toContain('Name: Beta Pictoris');
  });

  const parkedCalls = () => upstreamT.received().filter((m) => m.method === 'tools/call' && (m.params as Obj).name === 'trigger-elicitation-request');
  const cancelledUpstream = () => upstreamT.received().filter((m) => m.method === 'notifications/cancelled').map((m) => (m.params as Obj).requestId);

  it('a retry after the TTL → -32602 saying expired', async () => {
    const before = parkedCalls().length;
    const cancelsBefore = cancelledUpstream().length;
    const parked = await parkElicitation(t.url);
    const upstreamId = parkedCalls()[before]!.id;
    // The TTL has passed once the bridge has cancelled the parked call upstream.
    await until(() => cancelledUpstream().slice(cancelsBefore).includes(upstreamId), TTL_MS + 20_000);
    const err = errorOf(await retry(t.url, parked, { [parked.key]: accept('Too Late') }));
    expect(err).toMatchObject({ code: -32602, data: { requestState: 'expired' } });
    expect(err.message).toMatch(/expired/);
  });

  it('a parked call reaching its TTL is cancelled upstream and frees its session for a queued call', async () => {
    const before = parkedCalls().length;
    const cancelsBefore = cancelledUpstream().length;
    const logStart = upstreamT.received().length;
    // The pool's one session held by a parked call: the next call can only run once the TTL frees it.
    await parkElicitation(t.url);
    const parkedId = parkedCalls()[before]!.id;
    expect(cancelledUpstream().length).toBe(cancelsBefore); // still parked when the echo is sent
    const echo = await postModern(t.url, id(), 'tools/call', { name: 'echo', arguments: { message: 'after the ttl' } });
    expect(textOf(resultOf(echo))).toBe('Echo: after the ttl');
    // The echo reached the server only after the parked call had been cancelled there (one child, one log, in order).
    const log = upstreamT.received();
    const cancelAt = log.findIndex((m, i) => i >= logStart && m.method === 'notifications/cancelled' && (m.params as Obj).requestId === parkedId);
    const echoAt = log.findIndex((m, i) => i >= logStart && m.method === 'tools/call' && ((m.params as Obj).arguments as Obj | undefined)?.message === 'after the ttl');
    expect(cancelAt).toBeGreaterThanOrEqual(0);
    expect(echoAt).toBeGreaterThan(cancelAt);
  });
});

describe('issue 3 validation through the built CLI (stdio face, raw lines)', () => {
  let io: StdioLines;
  rawEverythingLines((lines) => (io = lines));

  const sendAndWait = async (m: Obj) => {
    io.send(m);
    await until(() => io.lines.some((l) => l.id === m.id), 10_000);
    return io.lines.find((l) => l.id === m.id)!;
  };

  it('no _meta envelope → -32602', async () => {
    const r = await sendAndWait({ jsonrpc: '2.0', id: 's-1', method: 'tools/list', params: {} });
    expect((r.error as Obj).code).toBe(-32602);
  });

  it('an unsupported version → -32022 with data.supported', async () => {
    const r = await sendAndWait({ jsonrpc: '2.0', id: 's-2', method: 'tools/list', params: { _meta: { ...envelope({}), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } });
    expect(r.error).toMatchObject({ code: -32022, data: { supported: [V] } });
  });

  it.each(['tools/frobnicate', 'ping', 'logging/setLevel', 'resources/unsubscribe'])('%s → -32601', async (method) => {
    const r = await sendAndWait({ jsonrpc: '2.0', id: `s-${method}`, method, params: { _meta: envelope({}) } });
    expect((r.error as Obj).code).toBe(-32601);
  });
});
