// Serves a fetch-style handler (the SDK v2's createMcpHandler) from node:http, for test fixtures.

/** Copies a node request into a web Request whose signal aborts when the client goes away. */
export async function toWebRequest(req, res, base = 'http://127.0.0.1') {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const body = chunks.length > 0 && req.method !== 'GET' && req.method !== 'HEAD' ? Buffer.concat(chunks) : undefined;
  return { request: new Request(new URL(req.url ?? '/', base), { method: req.method, headers, body, signal: controller.signal }), controller };
}

/** Writes a web Response to a node response, streaming its body until done or the client leaves. */
export async function writeWebResponse(response, res, controller) {
  const headers = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  controller.signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the client went away
  }
  res.end();
}
