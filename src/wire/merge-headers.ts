/**
 * `base` with `over` on top, one entry per header name whatever its case
 * (names lower-cased): a client's `Authorization` replaces a configured one
 * instead of joining it (`Headers` would send `a, b`).
 */
export function mergeHeaders(base: Readonly<Record<string, string>>, over: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in base) out[k.toLowerCase()] = base[k];
  if (over) for (const k in over) out[k.toLowerCase()] = over[k];
  return out;
}
