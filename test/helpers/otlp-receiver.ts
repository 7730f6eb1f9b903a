import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON encoding carries it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; boolValue?: boolean; intValue?: string } }>;
}

export const SERVER_KIND = 2;
export const CLIENT_KIND = 3;

/** A span attribute's value, whatever its type. */
export function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.boolValue ?? v?.intValue;
}

export interface OtlpReceiver {
  url: string;
  spans: OtlpSpan[];
  contentTypes: string[];
  close(): Promise<void>;
}

/** An OTLP/HTTP traces receiver on 127.0.0.1:0: POST /v1/traces with the JSON encoding; keeps every span. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes, close: () => new Promise((r) => server.close(() => r())) };
}
