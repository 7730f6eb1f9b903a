import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server, for fault tests. `stop()`
 * makes the server look down (connections refused, open ones cut) and
 * `start()` brings it back on the same port, like a restart. `dropResponses(n)`
 * lets the next n requests reach the server but cuts their connections the
 * moment the answer starts: the server did the work, the client never hears.
 * With `only`, just requests whose bytes contain it count (other traffic, such
 * as a listen the bridge re-opens meanwhile, passes).
 */
export class FaultProxy {
  /** Requests whose answers were cut so far. */
  dropped = 0;
  private server: net.Server | undefined;
  /** Connections from the client (the bridge), each with its socket to the server. */
  private readonly pairs = new Map<net.Socket, net.Socket>();
  private dropsLeft = 0;
  private dropOnly: string | undefined;

  private constructor(
    private readonly targetPort: number,
    public port: number,
  ) {}

  /** Listens on `port` (0 picks one) and forwards to 127.0.0.1:`targetPort`. */
  static async start(targetPort: number, port = 0): Promise<FaultProxy> {
    const proxy = new FaultProxy(targetPort, port);
    await proxy.start();
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** (Re)opens the listening socket on the same port. */
  async start(): Promise<void> {
    const server = net.createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /**
   * Stops listening and closes every open connection: the server is "down".
   * Like a server that shuts down, it sends FIN and resolves once the client has
   * closed its side too, so the client no longer holds an idle keep-alive socket
   * it could reuse (a stale one would fail as ECONNRESET, not as refused).
   */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    // Refuse new connections at once; server.close() calls back when the open ones have closed.
    const stopped = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    const closed = [...this.pairs.keys()].map(
      (client) =>
        new Promise<void>((resolve) => {
          client.once('close', () => resolve());
          client.end();
          // A client that never answers the FIN is cut after a while.
          setTimeout(() => client.destroy(), 5_000).unref();
        }),
    );
    await Promise.all([...closed, stopped]);
  }

  dropResponses(n: number, only?: string): void {
    this.dropsLeft = n;
    this.dropOnly = only;
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    this.pairs.set(client, upstream);
    let awaitingAnswer = false;
    let request = '';
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (!awaitingAnswer) request = '';
      awaitingAnswer = true;
      request += chunk.toString('latin1');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      // Matched when the answer starts, against the filter armed now: a request sent before dropResponses()
      // (a listen whose first bytes come late) is judged by what it asked, not by the filter of its day.
      const matches = this.dropOnly === undefined || request.includes(this.dropOnly);
      if (awaitingAnswer && matches && this.dropsLeft > 0) {
        this.dropsLeft--;
        this.dropped++;
        return cut();
      }
      awaitingAnswer = false;
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', cut);
      s.on('close', () => {
        this.pairs.delete(client);
        cut();
      });
    }
  }
}
