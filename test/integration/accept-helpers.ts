import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { CLI_COMMAND } from '../helpers/cli.js';
import { EVERYTHING_STDIO_COMMAND, stopProcess } from '../helpers/processes.js';

/**
 * Helpers of the accept-* files (acceptance of issues 3 and 4 through the
 * built CLI): bounded polling, recorders of what an upstream receives, and a
 * line-by-line client of `mcp-bridge --stdio`.
 */

export const V = '2026-07-28';

export type Obj = Record<string, unknown>;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms until it holds or `ms` pass; every wait here is bounded. */
export async function until(check: () => boolean, ms = 8_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(25);
  }
}

export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
}

/** What the upstream server received, client→server messages in arrival order. */
export interface Recorder {
  received(): Obj[];
  /** The same, as the text that arrived (a stdin line, a POST body). */
  raw(): string[];
  close(): Promise<void>;
}

/**
 * A stdio wrapper: runs the upstream command with its stdout and stderr as its
 * own, copies stdin to it and appends every stdin line to `log`.
 */
export const STDIN_TEE = `
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const [log, command, ...args] = process.argv.slice(1);
const child = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
let buf = '';
process.stdin.on('data', (chunk) => {
  child.stdin.write(chunk);
  buf += chunk;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line.trim()) fs.appendFileSync(log, line + '\\n');
  }
});
process.stdin.on('end', () => child.stdin.end());
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code) => process.exit(code ?? 1));
`;

export function stdinTee(upstream: string[] = EVERYTHING_STDIO_COMMAND): { command: string[]; recorder: Recorder } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'accept-m2l-'));
  const log = path.join(dir, 'stdin.jsonl');
  const raw = () => {
    try {
      return readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  const received = () => raw().map((l) => JSON.parse(l) as Obj);
  const command = [process.execPath, '-e', STDIN_TEE, log, ...upstream];
  return { command, recorder: { received, raw, close: async () => rmSync(dir, { recursive: true, force: true }) } };
}

/** A pass-through HTTP recorder in front of `target` (SSE responses stream through as they come). */
export async function httpRecorder(target: string): Promise<Recorder & { url: string }> {
  const t = new URL(target);
  const seen: Obj[] = [];
  const bodies: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        bodies.push(body.toString('utf8'));
        try {
          seen.push(...[JSON.parse(body.toString('utf8')) as Obj].flat());
        } catch {
          // not JSON: nothing to record
        }
      }
      const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: { ...req.headers, host: t.host } }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        // An SSE stream's headers go out at once, as the server sent them, before any event.
        res.flushHeaders();
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => seen,
    raw: () => bodies,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Newline-delimited JSON-RPC with a spawned `mcp-bridge --stdio`, read line by line. */
export class StdioLines {
  readonly child: ChildProcess;
  readonly lines: Obj[] = [];
  #buf = '';

  constructor(args: string[]) {
    const [command, ...entry] = CLI_COMMAND;
    this.child = spawn(command!, [...entry, '--stdio', '--log-level', 'warn', ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.#buf += chunk;
      for (let i = this.#buf.indexOf('\n'); i >= 0; i = this.#buf.indexOf('\n')) {
        this.lines.push(JSON.parse(this.#buf.slice(0, i)) as Obj);
        this.#buf = this.#buf.slice(i + 1);
      }
    });
  }

  send(m: Obj): void {
    this.child.stdin!.write(JSON.stringify(m) + '\n');
  }

  async request(id: string, method: string, params: Obj = {}, caps: Obj = {}, meta: Obj = {}): Promise<Obj> {
    this.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(caps, meta) } });
    await until(() => this.lines.some((l) => l.id === id), 10_000);
    return this.lines.find((l) => l.id === id)!;
  }
}

/**
 * In the calling describe: before its tests, spawns `mcp-bridge --stdio --
 * <server-everything stdio>`, expects its server/discover answer and hands the
 * lines client to `use`; after them, ends it.
 */
export function rawEverythingLines(use: (io: StdioLines) => void): void {
  let io: StdioLines | undefined;

  beforeAll(async () => {
    io = new StdioLines(['--', ...EVERYTHING_STDIO_COMMAND]);
    use(io);
    expect(await io.request('discover', 'server/discover')).toMatchObject({ result: { resultType: 'complete', supportedVersions: [V] } });
  });

  afterAll(async () => {
    io?.child.stdin!.end();
    if (io) await stopProcess(io.child, 5_000);
  });
}

export function envelope(caps: Obj, meta: Obj = {}): Obj {
  return {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'accept-raw-stdio', version: '1.0.0' },
    ...meta,
  };
}


const ACCEPT_BOTH = 'application/json, text/event-stream';

/** One raw HTTP exchange: the status and the JSON-RPC response, whether it came as JSON or on an SSE stream. */
export interface RawReply {
  status: number;
  body: Obj;
}

/** POSTs `body` to `<base>/mcp` with `headers` (JSON content type and the dual Accept added). */
export async function rawPost(base: string, body: unknown, headers: Record<string, string>): Promise<RawReply> {
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return { status: res.status, body: text ? (JSON.parse(text) as Obj) : {} };
  const messages = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Obj);
  return { status: res.status, body: messages.find((m) => 'result' in m || 'error' in m) ?? {} };
}

/** The standard 2026 headers of a request (digest §2.5): version, method and, where the method has one, name. */
export function modernHeaders(method: string, params: Obj = {}): Record<string, string> {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : undefined;
  return { 'mcp-protocol-version': V, 'mcp-method': method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}) };
}

/** A well-formed 2026-07-28 request POSTed with the right headers, plus `extraHeaders`. */
export function postModern(base: string, id: string | number, method: string, params: Obj = {}, caps: Obj = {}, extraHeaders: Record<string, string> = {}): Promise<RawReply> {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(caps) } };
  return rawPost(base, body, { ...modernHeaders(method, params), ...extraHeaders });
}
