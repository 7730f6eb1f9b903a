import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { SseParser, type SseEvent } from '../../src/wire/sse-parser.js';

/**
 * Byte-level HTTP and WebSocket clients for hostile-input tests: fetch and
 * http.request refuse to send malformed requests, and a bridge must survive them.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
}

/** Writes `bytes` to 127.0.0.1:port and parses the one response (the connection is closed by either side). */
export function rawRequest(port: number, bytes: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (c) => {
      chunks.push(c);
      // A complete response ends the exchange even if the server keeps the connection open.
      if (isComplete(Buffer.concat(chunks))) done();
    });
    socket.on('end', done);
    socket.on('error', () => done());
    socket.write(bytes);
  });
}

export interface HttpSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Defaults to `127.0.0.1:<port>`; null sends no Host header. */
  host?: string | null;
}

/** Builds an HTTP/1.1 request byte for byte (header values are not validated) and sends it. */
export function httpRequest(port: number, spec: HttpSpec, timeoutMs?: number): Promise<RawResponse> {
  const body = spec.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body, 'utf8');
  const lines = [`${spec.method} ${spec.path} HTTP/1.1`];
  const host = spec.host === undefined ? `127.0.0.1:${port}` : spec.host;
  if (host !== null) lines.push(`Host: ${host}`);
  const headers = { connection: 'close', ...(spec.headers ?? {}) };
  const names = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (!names.has('content-length') && !names.has('transfer-encoding') && (body.length > 0 || spec.method === 'POST')) lines.push(`Content-Length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return rawRequest(port, Buffer.concat([head, body]), timeoutMs);
}

function splitHead(buf: Buffer): { head: string; rest: Buffer } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  return { head: buf.subarray(0, end).toString('latin1'), rest: buf.subarray(end + 4) };
}

function headersOf(head: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return out;
}

function isComplete(buf: Buffer): boolean {
  const parts = splitHead(buf);
  if (!parts) return false;
  const h = headersOf(parts.head);
  if (h['content-length'] !== undefined) return parts.rest.length >= Number(h['content-length']);
  if ((h['transfer-encoding'] ?? '').includes('chunked')) return parts.rest.includes('\r\n0\r\n\r\n') || parts.rest.subarray(0, 5).toString() === '0\r\n\r\n';
  return false;
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  for (let guard = 0; guard < 100_000 && i < buf.length; guard++) {
    const eol = buf.indexOf('\r\n', i);
    if (eol === -1) break;
    const size = parseInt(buf.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function parseResponse(buf: Buffer): RawResponse {
  const parts = splitHead(buf);
  if (!parts) return { status: 0, headers: {}, body: buf.toString('utf8'), json: undefined };
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(parts.head)?.[1] ?? 0);
  const headers = headersOf(parts.head);
  let raw = parts.rest;
  if ((headers['transfer-encoding'] ?? '').includes('chunked')) raw = dechunk(raw);
  else if (headers['content-length'] !== undefined) raw = raw.subarray(0, Number(headers['content-length']));
  const body = raw.toString('utf8');
  let json: unknown;
  try {
    json = body === '' ? undefined : JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status, headers, body, json };
}

// ─── raw WebSocket ──────────────────────────────────────────────────────────

/** One WebSocket frame, masked unless told otherwise (clients must mask, RFC 6455 §5.3). */
export function wsFrame(opcode: number, payload: Buffer, opts: { fin?: boolean; rsv1?: boolean; mask?: boolean } = {}): Buffer {
  const fin = opts.fin ?? true;
  const mask = opts.mask ?? true;
  const b0 = (fin ? 0x80 : 0) | (opts.rsv1 ? 0x40 : 0) | (opcode & 0x0f);
  let lenBytes: Buffer;
  if (payload.length < 126) lenBytes = Buffer.from([(mask ? 0x80 : 0) | payload.length]);
  else if (payload.length < 65536) {
    lenBytes = Buffer.alloc(3);
    lenBytes[0] = (mask ? 0x80 : 0) | 126;
    lenBytes.writeUInt16BE(payload.length, 1);
  } else {
    lenBytes = Buffer.alloc(9);
    lenBytes[0] = (mask ? 0x80 : 0) | 127;
    lenBytes.writeBigUInt64BE(BigInt(payload.length), 1);
  }
  if (!mask) return Buffer.concat([Buffer.from([b0]), lenBytes, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ key[i % 4]));
  return Buffer.concat([Buffer.from([b0]), lenBytes, key, masked]);
}

export interface RawWsOutcome {
  /** The handshake's HTTP status (101 when upgraded). */
  status: number;
  /** The first close frame's code, when the server sent one. */
  closeCode?: number;
  /** Text of the data frames the server sent before closing. */
  messages: string[];
  /** The refusal body when the upgrade was refused. */
  body: string;
}

/**
 * Upgrades to `/ws` by hand (extra handshake headers replace the defaults),
 * writes `frames`, and collects what comes back until the server closes or
 * `timeoutMs` passes.
 */
export function rawWs(port: number, opts: { headers?: Record<string, string | null>; frames?: Buffer[]; path?: string; timeoutMs?: number } = {}): Promise<RawWsOutcome> {
  const defaults: Record<string, string | null> = {
    Host: `127.0.0.1:${port}`,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Protocol': 'mcp',
  };
  const headers = { ...defaults, ...(opts.headers ?? {}) };
  const head = [`GET ${opts.path ?? '/ws'} HTTP/1.1`, ...Object.entries(headers).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${v}`)].join('\r\n') + '\r\n\r\n';
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf: Buffer = Buffer.alloc(0); // Buffer<ArrayBufferLike>: subarray() results are assigned back
    let status = 0;
    let body = '';
    const messages: string[] = [];
    let closeCode: number | undefined;
    let upgraded = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, closeCode, messages, body });
    };
    const timer = setTimeout(finish, opts.timeoutMs ?? 3_000);
    socket.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      if (!upgraded) {
        const parts = splitHead(buf);
        if (!parts) return;
        status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(parts.head)?.[1] ?? 0);
        if (status !== 101) {
          body = parts.rest.toString('utf8');
          return;
        }
        upgraded = true;
        buf = parts.rest;
        for (const f of opts.frames ?? []) socket.write(f);
      }
      // Server frames are unmasked; read as many whole frames as arrived.
      for (let guard = 0; guard < 1000 && buf.length >= 2; guard++) {
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 0x8) {
          closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
          return finish();
        }
        if (opcode === 0x1 || opcode === 0x2) messages.push(payload.toString('utf8'));
      }
    });
    socket.on('end', () => {
      if (!upgraded) body = splitHead(buf)?.rest.toString('utf8') ?? body;
      finish();
    });
    socket.on('error', finish);
    socket.write(head);
  });
}

// ─── an SSE stream held open ────────────────────────────────────────────────

/** A GET whose `text/event-stream` reply stays open; events are collected as they come. */
export class OpenSse {
  readonly events: SseEvent[] = [];
  status = 0;
  private req: http.ClientRequest | undefined;
  private waiters: Array<() => void> = [];

  /** Opens `path` and resolves once the response head arrived. */
  static open(port: number, path: string, headers: Record<string, string>): Promise<OpenSse> {
    const s = new OpenSse();
    return new Promise((resolve, reject) => {
      s.req = http.get({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        s.status = res.statusCode ?? 0;
        const parser = new SseParser((e) => {
          s.events.push(e);
          for (const w of s.waiters.splice(0)) w();
        });
        res.on('data', (c: Buffer) => parser.push(c));
        res.on('error', () => {});
        resolve(s);
      });
      s.req.on('error', reject);
    });
  }

  /** The first event (past or future) that satisfies `pred`, or undefined after `timeoutMs`. */
  async next(pred: (e: SseEvent) => boolean, timeoutMs = 5_000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (let guard = 0; guard < 10_000; guard++) {
      const hit = this.events.find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return undefined;
  }

  close(): void {
    this.req?.destroy();
  }
}
