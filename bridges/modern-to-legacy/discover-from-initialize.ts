import type { Implementation } from '@modelcontextprotocol/server';
import type { UpstreamFacts } from '../../src/contracts/upstream.js';
import { MODERN_VERSIONS } from '../../src/epochs/versions.js';
import { serverCapabilitiesToModern } from '../shared/capabilities-to-legacy.js';
import { CACHE_DEFAULTS } from './result-shaping.js';
import { META } from './modern-envelope.js';

/**
 * `server/discover` answered from a legacy upstream's InitializeResult
 * (digest §1.3, §5.1): the bridge's modern versions, the server's capabilities
 * without `tasks`, its instructions, and its identity in result `_meta`.
 */

/** The upstream's identity; legacy servers must send one, but a placeholder beats none. */
export function upstreamServerInfo(facts: UpstreamFacts): Implementation {
  return facts.serverInfo ?? facts.initialize?.serverInfo ?? { name: 'legacy-mcp-server', version: 'unknown' };
}

/** The DiscoverResult for this upstream. `ttlMs` 0 + `private`: capabilities may differ per caller's caps. */
export function discoverFromInitialize(facts: UpstreamFacts): Record<string, unknown> {
  const init = facts.initialize;
  const capabilities = serverCapabilitiesToModern(init?.capabilities ?? facts.capabilities);
  const instructions = facts.instructions ?? init?.instructions;
  const result: Record<string, unknown> = {
    resultType: 'complete',
    supportedVersions: [...MODERN_VERSIONS],
    capabilities,
    ...CACHE_DEFAULTS,
    _meta: { [META.serverInfo]: upstreamServerInfo(facts) },
  };
  if (typeof instructions === 'string') result.instructions = instructions;
  return result;
}
