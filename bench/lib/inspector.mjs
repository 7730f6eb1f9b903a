// The live JS heap of a node process, through its inspector (`--inspect` on
// 127.0.0.1): a full garbage collection, then the heap in use. RSS also counts
// garbage not yet collected and heap V8 keeps committed; this is what is held.
import WebSocket from 'ws';

const INSPECTOR_URL = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/;

/** The inspector's WebSocket URL printed by a process started with `--inspect`, if any. */
export function inspectorUrl(stderrText) {
  return INSPECTOR_URL.exec(stderrText)?.[1];
}

/** Connects to an inspector; `liveHeapKiB()` collects garbage and reads `usedSize`. */
export function connectInspector(url, timeoutMs = 20_000) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const pending = new Map();
    let nextId = 0;
    const call = (method, params = {}) =>
      new Promise((res, rej) => {
        const id = ++nextId;
        const timer = setTimeout(() => {
          pending.delete(id);
          rej(new Error(`inspector ${method} timed out`));
        }, timeoutMs);
        pending.set(id, (msg) => {
          clearTimeout(timer);
          if (msg.error) rej(new Error(`inspector ${method}: ${msg.error.message}`));
          else res(msg.result);
        });
        ws.send(JSON.stringify({ id, method, params }));
      });
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
    });
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        async liveHeapKiB() {
          await call('HeapProfiler.collectGarbage');
          const usage = await call('Runtime.getHeapUsage');
          return usage.usedSize / 1024;
        },
        close: () => ws.close(),
      }),
    );
  });
}
