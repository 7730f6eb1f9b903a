import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP exchange that went through an ExchangeRecorder. */
export interface RecordedExchange {
  method: string;
  /** The JSON-RPC method of a POSTed request or notification; `response` for a POSTed answer; '' otherwise. */
  rpc: string;
  lastEventId?: string;
  status?: number;
  /** True until the response has ended or either side closed it. */
  open: boolean;
}

/**
 * A plain HTTP reverse proxy on 127.0.0.1 in front of one server that records
 * every exchange passing through it and whether it is still open: what a test
 * needs to see which streams a client holds on a server at a given moment.
 * Bodies are forwarded unchanged (POST bodies are read first to name them).
 */
export class ExchangeRecorder {
  readonly exchanges: RecordedExchange[] = [];
  private readonly agent = new http.Agent({ keepAlive: true });

  private constructor(
    private readonly server: http.Server,
    private readonly target: URL,
  ) {}

  static async start(targetBase: string): Promise<ExchangeRecorder> {
    let self: ExchangeRecorder | undefined;
    const server = http.createServer((req, res) => self!.forward(req, res));
    self = new ExchangeRecorder(server, new URL(targetBase));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Exchanges still open, optionally only those `which` picks. */
  open(which: (x: RecordedExchange) => boolean = () => true): RecordedExchange[] {
    return this.exchanges.filter((x) => x.open && which(x));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const lastEventId = req.headers['last-event-id'];
      const x: RecordedExchange = { method: req.method ?? '', rpc: rpcOf(body), open: true, ...(typeof lastEventId === 'string' ? { lastEventId } : {}) };
      this.exchanges.push(x);
      const closed = () => (x.open = false);
      res.once('close', closed);
      let answered = false;
      const up = http.request({ host: this.target.hostname, port: this.target.port, path: req.url, method: req.method, headers: req.headers, agent: this.agent }, (answer) => {
        x.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.once('end', () => (answered = true));
        answer.once('close', () => {
          closed();
          if (!res.writableEnded) res.destroy();
        });
      });
      // The client went away before the answer ended: so does the exchange with the server.
      res.once('close', () => {
        if (!answered) up.destroy();
      });
      up.once('error', () => {
        closed();
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      up.end(body);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }
}

function rpcOf(body: Buffer): string {
  if (body.length === 0) return '';
  try {
    const m = JSON.parse(body.toString('utf8')) as { method?: unknown; result?: unknown; error?: unknown };
    if (typeof m.method === 'string') return m.method;
    return 'result' in m || 'error' in m ? 'response' : '';
  } catch {
    return '';
  }
}
