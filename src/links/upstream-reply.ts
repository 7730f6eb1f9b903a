/**
 * What the Streamable HTTP session links read of an upstream answer: its
 * status, a header, the whole body as text, or the body chunk by chunk. Two
 * sources give it: a `fetch` Response (a configured or test fetch), and a
 * node:http response read directly (node-http-reply.ts), which holds no
 * WHATWG stream, Response or Headers while a call's event stream stays open.
 */
export interface UpstreamReply {
  readonly status: number;
  readonly ok: boolean;
  /** A response header (name in any case), undefined when absent. */
  header(name: string): string | undefined;
  /** The whole body; a second call answers the same text (a refusal is read to classify it, then reported). */
  text(): Promise<string>;
  /**
   * Hands each body chunk to `onChunk` as it arrives; resolves at the end of
   * the body (or once `discard` was called), rejects when the connection
   * fails or `onChunk` throws (the body is then dropped).
   */
  stream(onChunk: (chunk: Uint8Array) => void): Promise<void>;
  /** Drops what is left of the body; an event stream's connection is closed. */
  discard(): Promise<void>;
  /** The bound on one SSE line its reader must apply (`--max-line`), when the source does not apply it itself. */
  readonly maxLineBytes?: number;
}

/** A fetch Response as an UpstreamReply. */
export function fetchReply(res: Response): UpstreamReply {
  let text: Promise<string> | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let dropped = false;
  return {
    status: res.status,
    ok: res.ok,
    header: (name) => res.headers.get(name) ?? undefined,
    text: () => (text ??= res.text()),
    async stream(onChunk) {
      if (!res.body || dropped) return;
      reader = res.body.getReader();
      try {
        // One chunk per helper call, so no chunk stays referenced while the next read waits.
        while (await pushNext(reader, onChunk));
      } catch (err) {
        await reader.cancel().catch(() => undefined);
        throw err;
      } finally {
        reader.releaseLock();
        reader = undefined;
      }
    },
    async discard() {
      dropped = true;
      if (reader) await reader.cancel().catch(() => undefined);
      else if (!res.bodyUsed) await res.body?.cancel().catch(() => undefined);
    },
  };
}

async function pushNext(reader: ReadableStreamDefaultReader<Uint8Array>, onChunk: (chunk: Uint8Array) => void): Promise<boolean> {
  const r = await reader.read();
  if (r.done) return false;
  onChunk(r.value);
  return true;
}
