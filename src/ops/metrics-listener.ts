import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import type { BridgeMetrics } from './bridge-metrics.js';

/** `--metrics-listen`'s own server: its URL and how to stop it. */
export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** `GET /metrics` alone, without auth, on its own address (`--metrics-listen`); resolves once it listens. */
export async function listenForMetrics(where: { host: string; port: number }, metrics: BridgeMetrics, logger: Logger): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/metrics') {
      metrics.render().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        (err: unknown) => {
          logger.error('metrics.render_failed', { err });
          res.writeHead(500).end();
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${where.host.includes(':') ? `[${where.host}]` : where.host}:${port}/metrics`,
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
