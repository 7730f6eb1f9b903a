import { LineTooLongError } from '../wire/line-buffer.js';
import { nodeHttpFetch } from './node-http-fetch.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * A byte stream that errors with LineTooLongError once any line (ended by LF
 * or CR, as in HTML §9.2.6) grows past `maxLineBytes`, so an upstream cannot
 * make the bridge buffer an endless SSE field.
 */
export function lineLimit(maxLineBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let run = 0;
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      while (start < chunk.length) {
        const lf = chunk.indexOf(LF, start);
        const cr = chunk.indexOf(CR, start);
        const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        const stop = end === -1 ? chunk.length : end;
        run += stop - start;
        if (run > maxLineBytes) {
          controller.error(new LineTooLongError(maxLineBytes));
          return;
        }
        if (end === -1) break;
        run = 0;
        start = end + 1;
      }
      controller.enqueue(chunk);
    },
  });
}

/**
 * Wraps `fetch` so that every `text/event-stream` response body from the
 * upstream is bounded by `maxLineBytes` per line (`--max-line`). Other bodies
 * pass untouched: they are read whole, and their readers bound them. The
 * default base is node:http, about half the CPU of the global fetch per call
 * (issue 7 bench, node-http-fetch.ts).
 */
export function lineLimitedFetch(maxLineBytes: number, base: typeof fetch = nodeHttpFetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    // Type first: touching `body` of a buffered reply would build a stream for nothing (node-http-fetch.ts).
    if (!type.includes('text/event-stream') || !res.body) return res;
    return new Response(res.body.pipeThrough(lineLimit(maxLineBytes)), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
