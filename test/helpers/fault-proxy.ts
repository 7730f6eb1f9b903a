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
  private readonly sockets = new Set<net.Socket>();
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

  /** Stops listening and cuts every open connection: the server is "down". */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  dropResponses(n: number, only?: string): void {
    this.dropsLeft = n;
    this.dropOnly = only;
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    this.sockets.add(client);
    this.sockets.add(upstream);
    let awaitingAnswer = false;
    let matches = false;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (!awaitingAnswer) matches = false;
      awaitingAnswer = true;
      matches ||= this.dropOnly === undefined || chunk.includes(this.dropOnly);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
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
        this.sockets.delete(s);
        cut();
      });
    }
  }
}
