import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_COMMAND, startCli, type RunningCli } from '../helpers/cli.js';
import { MODERN_STDIO_COMMAND, startModernHttpServer, type RunningModernServer } from '../helpers/modern-fixture.js';
import { EVERYTHING_STDIO_COMMAND, stopProcess } from '../helpers/processes.js';
import { httpRequest, OpenSse } from '../helpers/raw-http.js';
import { startV1SessionServer, type V1SessionServer } from '../helpers/v1-session-server.js';
import { httpRecorder, stdinTee, until, type Recorder } from './accept-helpers.js';

/**
 * Issue 11: a JSON-RPC id comes back exactly as the client wrote it, integers
 * past ±(2^53−1) included, on every face (POST /mcp modern and
 * initialize-era, /sse + /messages, /ws, --stdio) and through every bridge
 * direction, with real upstreams. Everything is raw text: a JSON client would
 * round the id before the test could look at it.
 */

const MODERN = '2026-07-28';
const LEGACY = '2025-06-18';
const BIG = ['9007199254740993', '-9007199254740993', '12345678901234567890123'];
const ACCEPT_BOTH = 'application/json, text/event-stream';
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const BIG_ID_SERVER = [process.execPath, path.join(FIXTURES, 'big-id-server.mjs')];

/** The raw text holds `"id":<token>` as a whole token (not a prefix of a longer number). */
function carriesId(raw: string, token: string): boolean {
  return new RegExp(`"id"\\s*:\\s*${token.replace(/[-"\\]/g, '\\$&')}\\s*[,}]`).test(raw);
}

const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'exact-ids', version: '1' } };
const echoParams = (message: string) => ({ name: 'echo', arguments: { message } });
const modernEcho = (token: string, message: string) => `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":${JSON.stringify({ ...echoParams(message), _meta: meta })}}`;
const legacyEcho = (token: string, message: string) => `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":${JSON.stringify(echoParams(message))}}`;
const initialize = (capabilities: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities, clientInfo: { name: 'exact-ids', version: '1' } } });
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const portOf = (url: string) => Number(new URL(url).port);

/** Collected raw text messages of a WebSocket or a stdio child, awaited by predicate. */
class RawInbox {
  readonly texts: string[] = [];
  private waiters: Array<() => void> = [];

  push(text: string): void {
    this.texts.push(text);
    for (const w of this.waiters.splice(0)) w();
  }

  async next(pred: (t: string) => boolean, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (let guard = 0; guard < 10_000; guard++) {
      const hit = this.texts.find(pred);
      if (hit !== undefined) return hit;
      const left = deadline - Date.now();
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    throw new Error(`no message matched in ${timeoutMs} ms; got:\n${this.texts.join('\n')}`);
  }
}

/** A raw session on one face: send text, await the raw answer carrying an id token. */
interface FaceSession {
  send(text: string): Promise<void>;
  answer(token: string): Promise<string>;
  close(): Promise<void>;
}

async function modernPost(base: string): Promise<FaceSession> {
  const answers: string[] = [];
  return {
    async send(text) {
      const r = await httpRequest(portOf(base), { method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, body: text }, 15_000);
      answers.push(r.body);
    },
    answer: async (token) => answers.find((a) => carriesId(a, token)) ?? `(no answer with id ${token}; got ${answers.join(' | ')})`,
    close: async () => {},
  };
}

async function legacyHttp(base: string, capabilities?: Record<string, unknown>): Promise<FaceSession> {
  const port = portOf(base);
  const post = (body: string, sid?: string) =>
    httpRequest(port, { method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': LEGACY } : {}) }, body }, 15_000);
  const init = await post(initialize(capabilities));
  const sid = init.headers['mcp-session-id'];
  expect(sid).toBeTruthy();
  await post(INITIALIZED, sid);
  const answers: string[] = [];
  return {
    async send(text) {
      answers.push((await post(text, sid)).body);
    },
    answer: async (token) => answers.find((a) => carriesId(a, token)) ?? `(no answer with id ${token}; got ${answers.join(' | ')})`,
    close: async () => void (await httpRequest(port, { method: 'DELETE', path: '/mcp', headers: { 'mcp-session-id': sid!, 'mcp-protocol-version': LEGACY } })),
  };
}

async function sseSession(base: string): Promise<FaceSession> {
  const port = portOf(base);
  const sse = await OpenSse.open(port, '/sse', {});
  const endpoint = await sse.next((e) => e.event === 'endpoint');
  const post = (body: string) => httpRequest(port, { method: 'POST', path: endpoint!.data, headers: { 'content-type': 'application/json' }, body });
  await post(initialize());
  await sse.next((e) => carriesId(e.data, '0'));
  await post(INITIALIZED);
  return {
    send: async (text) => void (await post(text)),
    answer: async (token) => (await sse.next((e) => carriesId(e.data, token), 15_000))?.data ?? `(no event with id ${token})`,
    close: async () => sse.close(),
  };
}

async function wsSession(base: string): Promise<FaceSession> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, 'mcp');
  const inbox = new RawInbox();
  ws.on('message', (data) => inbox.push(String(data)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(initialize());
  await inbox.next((t) => carriesId(t, '0'));
  ws.send(INITIALIZED);
  return {
    send: async (text) => ws.send(text),
    answer: (token) => inbox.next((t) => carriesId(t, token)),
    close: async () => ws.close(),
  };
}

/** `mcp-bridge --stdio` in front of `upstream`, raw lines both ways. */
class StdioBridge {
  readonly child: ChildProcess;
  readonly inbox = new RawInbox();
  #buf = '';

  constructor(upstream: string[]) {
    const [command, ...entry] = CLI_COMMAND;
    this.child = spawn(command!, [...entry, '--stdio', '--log-level', 'warn', ...upstream], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.#buf += chunk;
      for (let i = this.#buf.indexOf('\n'); i >= 0; i = this.#buf.indexOf('\n')) {
        this.inbox.push(this.#buf.slice(0, i));
        this.#buf = this.#buf.slice(i + 1);
      }
    });
  }

  write(line: string): void {
    this.child.stdin!.write(line + '\n');
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    await stopProcess(this.child, 5_000);
  }
}

async function stdioSession(upstream: string[], epoch: 'modern' | 'legacy'): Promise<FaceSession> {
  const io = new StdioBridge(upstream);
  if (epoch === 'legacy') {
    io.write(initialize());
    await io.inbox.next((t) => carriesId(t, '0'));
    io.write(INITIALIZED);
  }
  return {
    send: async (text) => io.write(text),
    answer: (token) => io.inbox.next((t) => carriesId(t, token)),
    close: () => io.close(),
  };
}

type Face = 'modern POST /mcp' | 'initialize-era POST /mcp' | '/sse + /messages' | '/ws' | 'stdio modern' | 'stdio legacy';
const ALL_FACES: Face[] = ['modern POST /mcp', 'initialize-era POST /mcp', '/sse + /messages', '/ws', 'stdio modern', 'stdio legacy'];

function open(face: Face, cli: RunningCli, upstream: string[]): Promise<FaceSession> {
  switch (face) {
    case 'modern POST /mcp':
      return modernPost(cli.url);
    case 'initialize-era POST /mcp':
      return legacyHttp(cli.url);
    case '/sse + /messages':
      return sseSession(cli.url);
    case '/ws':
      return wsSession(cli.url);
    case 'stdio modern':
      return stdioSession(upstream, 'modern');
    case 'stdio legacy':
      return stdioSession(upstream, 'legacy');
  }
}

/**
 * Each big id, then the same digits as a string id, go out on `face`; each
 * answer is the echo of its own request and carries its id token unchanged.
 * `verbatim`: the request reaches an SDK v2 server with the client's id as
 * written, and that server refuses ids past 2^53 itself (-32600): its refusal
 * is what comes back, still under the exact id.
 */
async function roundTrip(face: Face, cli: RunningCli, upstream: string[], verbatim: boolean): Promise<void> {
  const s = await open(face, cli, upstream);
  try {
    const modern = face === 'modern POST /mcp' || face === 'stdio modern';
    const body = modern ? modernEcho : legacyEcho;
    const tokens = [...BIG, `"${BIG[0]}"`];
    await Promise.all(tokens.map((t, i) => s.send(body(t, `m${i}`))));
    for (const [i, token] of tokens.entries()) {
      const raw = await s.answer(token);
      expect(carriesId(raw, token), raw).toBe(true);
      if (verbatim && BIG.includes(token)) expect(raw).toMatch(/"error":\{"code":-32600,/);
      else expect(raw).toContain(`Echo: m${i}`);
    }
  } finally {
    await s.close();
  }
}

interface Upstream {
  name: string;
  /** The bridge direction each client epoch takes. */
  directions: string;
  start(): Promise<{ args: string[]; recorder?: Recorder; stop(): Promise<void> }>;
  faces: Face[];
  /** Faces whose requests reach the upstream with the client's own id (an m2m HTTP relay). */
  verbatim?: Face[];
  /** What the upstream receives is recorded (a stdin tee, an HTTP recorder). */
  recorded?: boolean;
  /** The bridge itself names a listen's notifications by the listen's id (no verbatim relay of it). */
  stampsListens?: boolean;
}

function registerEcho(mcp: McpServer): void {
  mcp.registerTool('echo', { description: 'Echoes', inputSchema: { message: z.string() } }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
}

const UPSTREAMS: Upstream[] = [
  {
    name: 'server-everything over stdio',
    directions: 'modern-to-legacy, legacy-to-legacy',
    faces: ALL_FACES,
    recorded: true,
    stampsListens: true,
    start: async () => {
      const tee = stdinTee(EVERYTHING_STDIO_COMMAND);
      return { args: ['--', ...tee.command], recorder: tee.recorder, stop: () => tee.recorder.close() };
    },
  },
  {
    name: 'the modern fixture over HTTP',
    directions: 'modern-to-modern (verbatim relay), legacy-to-modern',
    faces: ALL_FACES,
    verbatim: ['modern POST /mcp', 'stdio modern'],
    recorded: true,
    start: async () => {
      const fixture: RunningModernServer = await startModernHttpServer();
      const recorder = await httpRecorder(fixture.url);
      const url = `${recorder.url}${new URL(fixture.url).pathname}`;
      return { args: ['--upstream', url], recorder, stop: async () => (await recorder.close(), await fixture.close()) };
    },
  },
  {
    name: 'the modern fixture over stdio',
    directions: 'modern-to-modern (remapped ids), legacy-to-modern',
    faces: ['modern POST /mcp', 'initialize-era POST /mcp', 'stdio modern'],
    stampsListens: true,
    start: async () => ({ args: ['--', ...MODERN_STDIO_COMMAND], stop: async () => {} }),
  },
  {
    name: 'an SDK v1 Streamable HTTP server',
    directions: 'modern-to-legacy, legacy-to-legacy',
    faces: ['modern POST /mcp', 'initialize-era POST /mcp', '/ws'],
    start: async () => {
      const server: V1SessionServer = await startV1SessionServer({ name: 'exact-ids-v1', register: registerEcho });
      return { args: ['--upstream', server.url], stop: () => server.close() };
    },
  },
];

describe.each(UPSTREAMS)('exact ids: $name ($directions)', (u) => {
  let cli: RunningCli;
  let upstream: Awaited<ReturnType<Upstream['start']>>;

  beforeAll(async () => {
    upstream = await u.start();
    cli = await startCli(['--log-level', 'warn', ...upstream.args]);
  });

  afterAll(async () => {
    await cli?.close();
    await upstream?.stop();
  });

  it.each(u.faces)('%s: every answer carries its id token byte-identical', async (face) => {
    await roundTrip(face, cli, upstream.args, u.verbatim?.includes(face) ?? false);
  });

  it.skipIf(!u.stampsListens)('a listen’s notifications name it by its exact id (io.modelcontextprotocol/subscriptionId)', async () => {
    const ac = new AbortController();
    const body = `{"jsonrpc":"2.0","id":9007199254740993,"method":"subscriptions/listen","params":${JSON.stringify({ notifications: { toolsListChanged: true }, _meta: meta })}}`;
    const res = await fetch(`${cli.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' }, body, signal: ac.signal });
    const reader = res.body!.getReader();
    let text = '';
    try {
      for (let guard = 0; guard < 1_000 && !text.includes('acknowledged'); guard++) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
    } finally {
      ac.abort();
    }
    expect(text).toContain('notifications/subscriptions/acknowledged');
    expect(text).toContain('"io.modelcontextprotocol/subscriptionId":9007199254740993');
  });

  it.skipIf(!u.recorded)('what the upstream receives: the bridge’s own ids where it remaps, the client’s bytes where it relays verbatim', async () => {
    const modern = await modernPost(cli.url);
    const legacy = await legacyHttp(cli.url);
    await Promise.all(BIG.flatMap((token, i) => [modern.send(modernEcho(token, `up-m${i}`)), legacy.send(legacyEcho(token, `up-l${i}`))]));
    await legacy.close();
    const raw = upstream.recorder!.raw();
    const sent = (message: string) => raw.filter((t) => t.includes(`"${message}"`));
    for (const [i, token] of BIG.entries()) {
      // A legacy session upstream carries the bridge's own ids, never a client's.
      expect(sent(`up-l${i}`)).toHaveLength(1);
      expect(carriesId(sent(`up-l${i}`)[0]!, token)).toBe(false);
      // The modern POST face relays to a modern HTTP upstream the request as the client wrote it; anything else remaps.
      expect(sent(`up-m${i}`)).toHaveLength(1);
      if (u.verbatim?.includes('modern POST /mcp')) expect(sent(`up-m${i}`)[0]).toBe(modernEcho(token, `up-m${i}`));
      else expect(carriesId(sent(`up-m${i}`)[0]!, token)).toBe(false);
    }
  });
});

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
