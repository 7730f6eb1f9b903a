import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPath } from './request-path.js';
import type { Duplex } from 'node:stream';
import { RpcCode } from '../jsonrpc/codes.js';
import type { FaceUnit, Handler } from './face-unit.js';
import { writeJsonError } from './modern-post.js';
import { refuseUpgrade } from './ws-sessions.js';

/** One served upstream as the router sees it: its face unit once it is up, and its state otherwise. */
export interface ServerRoute {
  /** Absent while the upstream is being probed (or waited for): its routes answer 503. */
  readonly face: FaceUnit | undefined;
  readonly state: string;
}

export interface ServerRoutesOptions {
  /** Serve `/servers/<name>/…` and `GET /servers` (a config-file daemon); a single upstream has root routes only. */
  named: boolean;
  /** The body of `GET /servers`. */
  list?: () => unknown;
}

/** `/servers/<name>/<route>`: a name is what the config file allows (`[A-Za-z0-9._-]+`). */
const NAMED = /^\/servers\/([A-Za-z0-9._-]+)(\/[^/]*)?\/?$/;
const LISTING = /^\/servers\/?$/i;

/**
 * The routing layer in front of the face units: `/servers/<name>/{mcp,sse,messages,ws}`
 * reaches that server's unit, and while exactly one server is configured the root
 * `/mcp`, `/sse`, `/messages`, `/ws` reach it too. Names match case-sensitively;
 * the route after the name does not (as every other route of the face).
 * A server removed from the table is gone for new requests (404) at once.
 */
export class ServerRoutes {
  private readonly servers = new Map<string, ServerRoute>();
  /** The one server while there is exactly one (root routes), kept so a request does not iterate the map. */
  private only: [string, ServerRoute] | undefined;

  constructor(private readonly opts: ServerRoutesOptions) {}

  get size(): number {
    return this.servers.size;
  }

  set(name: string, route: ServerRoute): void {
    this.servers.set(name, route);
    this.only = this.servers.size === 1 ? [...this.servers][0] : undefined;
  }

  delete(name: string): void {
    this.servers.delete(name);
    this.only = this.servers.size === 1 ? [...this.servers][0] : undefined;
  }

  /** The face units that are up, for stats and shutdown. */
  faces(): FaceUnit[] {
    return [...this.servers.values()].flatMap((s) => (s.face ? [s.face] : []));
  }

  /**
   * The handler for a request, or undefined (404). `mount` is the prefix the
   * router itself is reached under: an embedding express app's mount path
   * (`req.baseUrl`, where `req.url` is relative to it), else none.
   */
  handlerFor(req: IncomingMessage, mount = (req as { baseUrl?: string }).baseUrl ?? ''): Handler | undefined {
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? '');
    const found = this.resolve(requestPath(req.url));
    if (found === undefined) return undefined;
    if (found === 'list') return method === 'GET' ? this.listHandler : undefined;
    const { route, sub, prefix, name } = found;
    if (sub === '/ws') return undefined; // only an upgrade reaches the WebSocket face
    const face = route.face;
    if (!face) return isMcpRoute(sub) ? notReady(name, route.state) : undefined;
    return face.handlerFor(method, sub, mount + prefix);
  }

  /** A WebSocket upgrade: `/ws` of a served unit, or refused (404, or 503 while the server is not up). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const found = this.resolve(requestPath(req.url));
    if (found === undefined || found === 'list' || found.sub !== '/ws') return refuseUpgrade(socket, 404, 'Not Found');
    if (!found.route.face) return refuseUpgrade(socket, 503, 'Service Unavailable');
    found.route.face.upgrade(req, socket, head);
  }

  private resolve(path: string): { route: ServerRoute; sub: string; prefix: string; name: string } | 'list' | undefined {
    if (this.opts.named) {
      if (LISTING.test(path)) return 'list';
      const m = NAMED.exec(path);
      if (m) {
        const route = this.servers.get(m[1]);
        return route && { route, sub: (m[2] ?? '').toLowerCase(), prefix: `/servers/${m[1]}`, name: m[1] };
      }
    }
    if (this.only === undefined) return undefined;
    const [name, route] = this.only;
    const sub = path.length > 1 && path.endsWith('/') ? path.slice(0, -1).toLowerCase() : path.toLowerCase();
    return { route, sub, prefix: '', name };
  }

  private readonly listHandler: Handler = (_req, res) => {
    const body = JSON.stringify(this.opts.list?.() ?? { servers: [...this.servers.keys()].map((name) => ({ name })) });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}

function isMcpRoute(sub: string): boolean {
  return sub === '/mcp' || sub === '/sse' || sub === '/messages';
}

function notReady(name: string, state: string): Handler {
  return (_req, res: ServerResponse) =>
    writeJsonError(res, 503, null, { code: RpcCode.ServerError, message: `Service Unavailable: server '${name}' is not up (state: ${state})` }, { 'retry-after': '1' });
}

