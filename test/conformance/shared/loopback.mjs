// The Host / Origin rule dns-rebinding-protection checks on a loopback HTTP
// server: both fixtures reject any name that is not a loopback one.
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopbackName(value) {
  try {
    return LOOPBACK.has(new URL(value.includes('://') ? value : `http://${value}`).hostname);
  } catch {
    return false;
  }
}

/** True when Host names a loopback address and Origin, if sent, does too. */
export function loopbackRequest(host, origin) {
  if (!host || !isLoopbackName(host)) return false;
  return origin === undefined || origin === null || isLoopbackName(origin);
}
