import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { expect } from 'vitest';
import { CLI_COMMAND, type RunningCli } from '../helpers/cli.js';
import { stopProcess } from '../helpers/processes.js';
import { httpRequest, OpenSse } from '../helpers/raw-http.js';

/**
 * Raw clients of every face for the exact-ids tests (issue 11): each sends
 * text as written and hands back the answer's text, since a JSON client would
 * round a big id before a test could look at it.
 */

export const MODERN = '2026-07-28';
export const LEGACY = '2025-06-18';
export const BIG = ['9007199254740993', '-9007199254740993', '12345678901234567890123'];
export const ACCEPT_BOTH = 'application/json, text/event-stream';
export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const BIG_ID_SERVER = [process.execPath, path.join(FIXTURES, 'big-id-server.mjs')];

/** The raw text holds `"id":<token>` as a whole token (not a prefix of a longer number). */
export function carriesId(raw: string, token: string): boolean {
  return new RegExp(`"id"\\s*:\\s*${token.replace(/[-"\\]/g, '\\$&')}\\s*[,}]`).test(raw);
}

export const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'exact-ids', version: '1' } };
export const echoParams = (message: string) => ({ name: 'echo', arguments: { message } });
export const modernEcho = (token: string, message: string) => `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":${JSON.stringify({ ...echoParams(message), _meta: meta })}}`;
export const legacyEcho = (token: string, message: string) => `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":${JSON.stringify(echoParams(message))}}`;
export const initialize = (capabilities: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities, clientInfo: { name: 'exact-ids', version: '1' } } });
export const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
export const portOf = (url: string) => Number(new URL(url).port);

/** Collected raw text messages of a WebSocket or a stdio child, awaited by predicate. */
export class RawInbox {
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
export interface FaceSession {
  send(text: string): Promise<void>;
  answer(token: string): Promise<string>;
  close(): Promise<void>;
}

export async function modernPost(base: string): Promise<FaceSession> {
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

export async function legacyHttp(base: string, capabilities?: Record<string, unknown>): Promise<FaceSession> {
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

export async function sseSession(base: string): Promise<FaceSession> {
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

export async function wsSession(base: string): Promise<FaceSession> {
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
export class StdioBridge {
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

/**
 * How long a fresh `--stdio` bridge may take to give its first answers: its own start, detection
 * (two probe children for a stdio upstream) and the upstream child it then spawns, all node start-ups
 * that a loaded 2-core machine makes several times slower (15 s was seen to fall short).
 */
export const STDIO_START_MS = 45_000;

export async function stdioSession(upstream: string[], epoch: 'modern' | 'legacy'): Promise<FaceSession> {
  const io = new StdioBridge(upstream);
  if (epoch === 'legacy') {
    io.write(initialize());
    await io.inbox.next((t) => carriesId(t, '0'), STDIO_START_MS);
    io.write(INITIALIZED);
  }
  return {
    send: async (text) => io.write(text),
    answer: (token) => io.inbox.next((t) => carriesId(t, token), STDIO_START_MS),
    close: () => io.close(),
  };
}

export type Face = 'modern POST /mcp' | 'initialize-era POST /mcp' | '/sse + /messages' | '/ws' | 'stdio modern' | 'stdio legacy';
export const ALL_FACES: Face[] = ['modern POST /mcp', 'initialize-era POST /mcp', '/sse + /messages', '/ws', 'stdio modern', 'stdio legacy'];

export function open(face: Face, cli: RunningCli, upstream: string[]): Promise<FaceSession> {
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
export async function roundTrip(face: Face, cli: RunningCli, upstream: string[], verbatim: boolean): Promise<void> {
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
