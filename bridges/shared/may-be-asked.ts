/**
 * Whether a server may send a client requests tied to a call (sampling,
 * elicitation, roots/list): any declared capability counts, including
 * experimental or future ones the bridge cannot judge, so only a client that
 * declared none is sure to be asked nothing. A call of such a client never
 * needs its upstream session alone (DESIGN "Correlating"): a server must not
 * ask for what was not declared, and the bridge never forwards it.
 */
export function mayBeAsked(capabilities: Record<string, unknown> | undefined): boolean {
  if (!capabilities) return false;
  for (const k in capabilities) if (capabilities[k] !== undefined && capabilities[k] !== null) return true;
  return false;
}
