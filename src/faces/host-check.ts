import { isIP } from 'node:net';

/**
 * `Host` validation against DNS rebinding. A rebinding page reaches the bridge
 * under the attacker's own host *name* (which it re-pointed at 127.0.0.1), so
 * a name the bridge does not know is refused. IP literals are accepted: a
 * browser sends one only when the page itself was loaded from that address,
 * and the Origin check covers pages from elsewhere.
 */

/** Host:port split of a `Host` header value; brackets kept off v6 literals. */
export function parseHostHeader(value: string): { hostname: string; port?: string } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+))(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return undefined;
  const hostname = (m[1] ?? m[2]).toLowerCase().replace(/\.$/, '');
  return m[3] === undefined ? { hostname } : { hostname, port: m[3] };
}

/** 127.0.0.0/8, ::1 (also v4-mapped), and `localhost`: the names that can only mean this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * True when the request's `Host` may be served: absent (HTTP/1.0 clients, never
 * a browser), an IP literal, `localhost`, the name the bridge listens on, or an
 * `allowHosts` entry (`name` matches any port, `name:port` only that port, `*`
 * anything).
 */
export function isHostAllowed(host: string | undefined, allowHosts: string[], listenHost?: string): boolean {
  if (host === undefined) return true;
  const parsed = parseHostHeader(host);
  if (!parsed) return false;
  const { hostname, port } = parsed;
  if (isIP(hostname) !== 0 || hostname === 'localhost') return true;
  if (listenHost !== undefined && listenHost.toLowerCase() === hostname) return true;
  return allowHosts.some((entry) => {
    if (entry === '*') return true;
    const want = parseHostHeader(entry);
    if (!want || want.hostname !== hostname) return false;
    return want.port === undefined || want.port === port;
  });
}
