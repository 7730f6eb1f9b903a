/**
 * Origin validation for every HTTP and WebSocket route (digest §2.1: the server
 * MUST validate `Origin`; present and invalid → 403). Browsers always send
 * `Origin` on cross-site requests, so refusing foreign origins is what stops a
 * web page from driving a local bridge (DNS rebinding included: the rebound
 * page still carries its own origin).
 */

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An origin in canonical form (`scheme://host[:port]`, lower-cased), or undefined when it is not one. */
function canonicalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname.toLowerCase());
  } catch {
    return false;
  }
}

/**
 * No Origin → allowed; loopback origins (localhost, 127.0.0.1, [::1], any port,
 * http/https) → allowed; else only those listed (`*` in the list allows any).
 */
export function isOriginAllowed(origin: string | undefined, allowOrigins: string[]): boolean {
  if (origin === undefined) return true;
  if (isLoopbackOrigin(origin)) return true;
  if (allowOrigins.includes('*')) return true;
  const wanted = canonicalOrigin(origin);
  // A value that is not an http(s) origin (e.g. the opaque "null") passes only when listed verbatim.
  if (wanted === undefined) return allowOrigins.includes(origin);
  return allowOrigins.some((entry) => canonicalOrigin(entry) === wanted);
}
