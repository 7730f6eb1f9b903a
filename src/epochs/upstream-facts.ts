import type { DiscoverResult, Implementation, InitializeResult } from '@modelcontextprotocol/server';
import type { UpstreamFacts } from '../contracts/upstream.js';
import { MODERN_VERSIONS } from './versions.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function implementation(v: unknown): Implementation | undefined {
  return isObj(v) && typeof v.name === 'string' ? (v as Implementation) : undefined;
}

/** Facts of a modern server from its DiscoverResult; serverInfo lives in the result's `_meta` (digest §1.2). */
export function factsFromDiscover(result: Obj, transport: UpstreamFacts['transport']): UpstreamFacts {
  const supported = Array.isArray(result.supportedVersions) ? result.supportedVersions.filter((v): v is string => typeof v === 'string') : [];
  const protocolVersion = MODERN_VERSIONS.find((v) => supported.includes(v)) ?? supported[0] ?? MODERN_VERSIONS[0];
  const facts: UpstreamFacts = {
    epoch: 'modern',
    transport,
    protocolVersion,
    supportedVersions: supported,
    capabilities: isObj(result.capabilities) ? result.capabilities : {},
    discover: result as unknown as DiscoverResult,
  };
  const info = implementation(isObj(result._meta) ? result._meta[SERVER_INFO] : undefined);
  if (info) facts.serverInfo = info;
  if (typeof result.instructions === 'string') facts.instructions = result.instructions;
  return facts;
}

/** Facts of a legacy server from the InitializeResult of a probe session. */
export function factsFromInitialize(result: Obj, epoch: 'initialize' | 'http+sse', transport: UpstreamFacts['transport']): UpstreamFacts {
  const facts: UpstreamFacts = {
    epoch,
    transport,
    protocolVersion: String(result.protocolVersion),
    capabilities: isObj(result.capabilities) ? result.capabilities : {},
    initialize: result as unknown as InitializeResult,
  };
  const info = implementation(result.serverInfo);
  if (info) facts.serverInfo = info;
  if (typeof result.instructions === 'string') facts.instructions = result.instructions;
  return facts;
}
