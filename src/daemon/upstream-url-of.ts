import type { ServerUnit } from './server-unit.js';

/**
 * The upstream URL a bridge resource path belongs to, for `--auth pass-through`
 * metadata: `/servers/<name>/…` names its server (case-insensitive, as routes
 * are); any other path is the only server's. Undefined for a command upstream.
 */
export function upstreamUrlOf(units: Iterable<ServerUnit>, path: string): string | undefined {
  const list = [...units];
  const named = /\/servers\/([^/]+)/i.exec(path);
  let wanted: string | undefined;
  try {
    wanted = named ? decodeURIComponent(named[1]).toLowerCase() : undefined;
  } catch {
    return undefined;
  }
  const unit = wanted !== undefined ? list.find((u) => u.name.toLowerCase() === wanted) : list.length === 1 ? list[0] : undefined;
  const upstream = unit?.entry.upstream;
  return upstream?.kind === 'url' ? upstream.url : undefined;
}
