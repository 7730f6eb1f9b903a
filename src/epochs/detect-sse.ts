import { BridgeError } from '../errors.js';
import { SseParser } from '../wire/sse-parser.js';
import type { ProbeObservation } from './classify-probe.js';
import { HTTP_PROBE_TIMEOUT_MS, mergeHeaders } from './http-observe.js';
import { initializeProbe } from './probe-requests.js';

type Obj = Record<string, unknown>;

/** What the 2024-11-05 GET leg found, and the InitializeResult when the handshake went through. */
export interface SseProbe {
  observation: ProbeObservation;
  initializeResult?: Obj;
  /** Why the handshake failed after the endpoint event, for the error message. */
  problem?: string;
}

const INIT_ID = 'mcp-bridge-sse-probe-1';

/**
 * GETs the URL expecting an `endpoint` event first (digest §2.7 step 4, §4.2),
 * then runs `initialize` through that endpoint to read the server's facts, and
 * closes the stream. Never rejects.
 */
export async function probeSse(url: string, headers: Record<string, string>, timeoutMs = HTTP_PROBE_TIMEOUT_MS, doFetch: typeof fetch = fetch): Promise<SseProbe> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    let res: Response;
    try {
      res = await doFetch(url, { method: 'GET', headers: mergeHeaders(headers, { accept: 'text/event-stream' }), signal: controller.signal });
    } catch (err) {
      if (err instanceof BridgeError) throw err;
      const cause = (err as { cause?: { code?: string } }).cause;
      return { observation: { kind: 'network-error', message: controller.signal.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? (err as Error).message) } };
    }
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    if (res.status !== 200 || !type.startsWith('text/event-stream') || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      return { observation: { kind: 'no-endpoint', status: res.status, detail: type.split(';')[0] || 'no content type' } };
    }
    return await handshake(url, headers, res.body, timeoutMs, doFetch);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

async function handshake(url: string, headers: Record<string, string>, body: ReadableStream<Uint8Array>, timeoutMs: number, doFetch: typeof fetch): Promise<SseProbe> {
  let onEndpoint!: (e: string | undefined) => void;
  let onAnswer!: (m: Obj | undefined) => void;
  const endpoint = new Promise<string | undefined>((r) => (onEndpoint = r));
  const answer = new Promise<Obj | undefined>((r) => (onAnswer = r));
  const parser = new SseParser((e) => {
    if (e.event === 'endpoint') return onEndpoint(e.data.trim());
    if (e.event !== 'message') return;
    try {
      const msg = JSON.parse(e.data) as Obj;
      if (msg.id === INIT_ID) onAnswer(msg);
    } catch {
      // not JSON: not ours
    }
  });
  const reader = body.getReader();
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        parser.push(chunk.value);
      }
    } catch {
      // aborted or dropped
    }
    onEndpoint(undefined);
    onAnswer(undefined);
  })();

  const raw = await endpoint;
  if (raw === undefined) return { observation: { kind: 'no-endpoint', status: 200, detail: 'the stream carried no endpoint event' } };
  const observation: ProbeObservation = { kind: 'sse-endpoint', endpoint: raw };
  const target = new URL(raw, url);
  // [SDK v2 client] the POST endpoint must share the SSE URL's origin (digest §4.2).
  if (target.origin !== new URL(url).origin) return { observation, problem: `its endpoint ${target.href} is on another origin` };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const post = await doFetch(target, {
      method: 'POST',
      headers: mergeHeaders(headers, { 'content-type': 'application/json' }),
      body: JSON.stringify(initializeProbe(INIT_ID)),
      signal: controller.signal,
    });
    await post.body?.cancel().catch(() => undefined);
    if (post.status < 200 || post.status > 299) return { observation, problem: `its endpoint answered HTTP ${post.status} to initialize` };
    const msg = await answer;
    const result = msg?.result;
    if (result && typeof result === 'object' && !Array.isArray(result)) return { observation, initializeResult: result as Obj };
    const err = msg?.error as { code?: number; message?: string } | undefined;
    return { observation, problem: err ? `it refused initialize: ${err.code} ${err.message ?? ''}`.trim() : 'it did not answer initialize on the stream' };
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    return { observation, problem: `its endpoint did not answer initialize within ${timeoutMs} ms` };
  } finally {
    clearTimeout(timer);
  }
}
