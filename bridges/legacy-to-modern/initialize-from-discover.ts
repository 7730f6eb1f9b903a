import type { Implementation, InitializeResult } from '@modelcontextprotocol/server';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { negotiateLegacyVersion } from '../../src/epochs/versions.js';
import { serverCapabilitiesToLegacy } from '../shared/capabilities-to-modern.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/** Legacy `InitializeResult` requires serverInfo; a server that names none gets this one (digest §5.1). */
export const SYNTHESIZED_SERVER_INFO: Implementation = { name: 'mcp-bridge-upstream', version: '0.0.0' };

function isImplementation(v: unknown): v is Implementation {
  return isObj(v) && typeof v.name === 'string' && typeof v.version === 'string';
}

/**
 * The `initialize` answer the bridge gives a legacy client itself, built from
 * the upstream's cached `server/discover` (digest §5.1): the client's version
 * when supported, else the newest legacy one; the discover capabilities minus
 * `extensions`; `serverInfo` from the result `_meta` (synthesized when absent);
 * `instructions` as they are. Facts without a discover result fall back on the
 * fields detection copied out of it.
 */
export function initializeFromDiscover(facts: Pick<UpstreamFacts, 'discover' | 'capabilities' | 'serverInfo' | 'instructions'>, requestedVersion: unknown): InitializeResult {
  const discover = (isObj(facts.discover) ? facts.discover : {}) as Obj;
  const meta = isObj(discover._meta) ? discover._meta : {};
  const capabilities = isObj(discover.capabilities) ? discover.capabilities : facts.capabilities;
  const serverInfo = [meta[SERVER_INFO_KEY], facts.serverInfo].find(isImplementation) ?? SYNTHESIZED_SERVER_INFO;
  const instructions = typeof discover.instructions === 'string' ? discover.instructions : facts.instructions;
  const result: Obj = {
    protocolVersion: negotiateLegacyVersion(requestedVersion),
    capabilities: serverCapabilitiesToLegacy(capabilities),
    serverInfo: { ...serverInfo },
  };
  if (typeof instructions === 'string') result.instructions = instructions;
  return result as unknown as InitializeResult;
}
