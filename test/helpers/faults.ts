import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { modernRequestHeaders } from '../../src/wire/modern-headers.js';
import { SseParser } from '../../src/wire/sse-parser.js';
import { CLI_ENTRY } from './cli.js';
import { stopProcess } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The stdio command of the fault fixture (hang, sleep, flood, pid, echo): [node, script]. */
export const FAULT_SERVER_COMMAND = [process.execPath, path.join(here, '..', 'fixtures', 'fault-server.mjs')];

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms until it returns a value or `timeoutMs` passes (then throws with `what`). */
export async function waitUntil<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** A bridge started from the built CLI with extra node flags and environment (e.g. `--expose-gc`). */
export interface SpawnedBridge {
  url: string;
  child: ChildProcess;
  pid: number;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  close(): Promise<void>;
}

/** Starts `node [nodeArgs] mcp-bridge --listen 127.0.0.1:0 …args` and resolves once it serves. */
export function spawnBridge(args: string[], opts: { nodeArgs?: string[]; env?: Record<string, string>; timeoutMs?: number; onStderr?: (all: string) => void } = {}): Promise<SpawnedBridge> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI_ENTRY, '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-bridge did not start in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      const before = stderr;
      stderr += c;
      opts.onStderr?.(stderr);
      const m = /serving \S+ upstream at (http:\/\/[\d.]+:\d+)\/mcp/.exec(stderr);
      if (m && !/serving \S+ upstream at/.test(before)) {
        clearTimeout(timer);
        resolve({ url: m[1], child, pid: child.pid!, stderr: () => stderr, exited, close: () => stopProcess(child, 8_000) });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`mcp-bridge exited early (code ${code})\n${stderr}`));
    });
  });
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

/** Open file descriptors of a process (Linux /proc). */
export function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Lines of `text` that contain `needle`. */
export function linesWith(text: string, needle: string | RegExp): string[] {
  return text.split('\n').filter((l) => (typeof needle === 'string' ? l.includes(needle) : needle.test(l)));
}

/** Writes one figure line to stderr, as every reliability test reports what it measured. */
export function report(test: string, figures: Record<string, unknown>): void {
  process.stderr.write(`[reliability] ${test}: ${Object.entries(figures).map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : String(v)}`).join(' ')}\n`);
}

export const MODERN = '2026-07-28';

/** The `_meta` envelope every 2026-07-28 request carries (digest §1.2). */
export function modernMeta(name = 'raw-modern'): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

/** POSTs one raw 2026-07-28 request with its standard headers; the caller reads (or drops) the reply. */
export function modernPost(baseUrl: string, id: string | number, method: string, params: Record<string, unknown> = {}, signal?: AbortSignal, extraHeaders: Record<string, string> = {}): Promise<Response> {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...modernMeta(), ...(params._meta as object | undefined) } } };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extraHeaders, ...modernRequestHeaders({ method, params: body.params }, MODERN) };
  return fetch(`${baseUrl}/mcp`, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/** The JSON-RPC messages of a reply, JSON or SSE, read to its end; `onMessage` sees each as it arrives. */
export async function readMessages(res: Response, onMessage?: (m: Record<string, unknown>) => void): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  const take = (m: Record<string, unknown>) => {
    out.push(m);
    onMessage?.(m);
  };
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await res.text();
    if (text !== '') take(JSON.parse(text));
    return out;
  }
  const parser = new SseParser((e) => {
    if (e.event === 'message' && e.data !== '') take(JSON.parse(e.data));
  });
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.push(value);
  }
  parser.end();
  return out;
}

/** A port that was free a moment ago on 127.0.0.1 (for servers a test starts later on purpose). */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A raw initialize-era Streamable HTTP session (initialize + initialized) on the bridge's /mcp. */
export interface RawLegacySession {
  sessionId: string;
  /** Headers every later request of the session carries. */
  headers: Record<string, string>;
  post(body: unknown, signal?: AbortSignal): Promise<Response>;
  /** DELETE /mcp: ends the session. */
  end(): Promise<number>;
}

export const LEGACY = '2025-11-25';

export async function openRawLegacySession(baseUrl: string, name = 'raw-legacy', extraHeaders: Record<string, string> = {}): Promise<RawLegacySession> {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extraHeaders };
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name, version: '1.0.0' } } };
  const res = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers: base, body: JSON.stringify(init) });
  const sessionId = res.headers.get('mcp-session-id');
  const answer = await readMessages(res);
  if (!sessionId || !answer.some((m) => m.id === 0 && m.result)) throw new Error(`initialize failed: ${res.status} ${JSON.stringify(answer)}`);
  const headers = { ...base, 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY };
  const post = (body: unknown, signal?: AbortSignal) => fetch(`${baseUrl}/mcp`, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await ack.body?.cancel();
  return {
    sessionId,
    headers,
    post,
    end: async () => {
      const r = await fetch(`${baseUrl}/mcp`, { method: 'DELETE', headers });
      await r.body?.cancel();
      return r.status;
    },
  };
}

/**
 * POSTs `body` over a raw socket that never reads a byte of the answer: a
 * client that stopped reading. Resolves once the request is written.
 */
export async function postAndStopReading(baseUrl: string, headers: Record<string, string>, body: unknown): Promise<import('node:net').Socket> {
  const net = await import('node:net');
  const url = new URL(baseUrl);
  const payload = JSON.stringify(body);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.pause();
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => resolve());
  });
  const head = [`POST /mcp HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(payload)}`, '', ''].join('\r\n');
  await new Promise<void>((resolve) => socket.write(head + payload, () => resolve()));
  return socket;
}
