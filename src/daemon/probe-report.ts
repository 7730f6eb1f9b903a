import type { UpstreamFacts } from '../contracts/upstream.js';

/** The one JSON object `mcp-bridge probe --json` prints. */
export function probeJson(facts: UpstreamFacts): Record<string, unknown> {
  return {
    epoch: facts.epoch,
    transport: facts.transport,
    protocolVersion: facts.protocolVersion,
    supportedVersions: facts.supportedVersions ?? [facts.protocolVersion],
    serverInfo: facts.serverInfo ?? null,
    capabilities: facts.capabilities,
    instructions: facts.instructions ?? null,
  };
}

/** A short human-readable report of what `probe` found. */
export function probeText(facts: UpstreamFacts): string {
  const server = facts.serverInfo ? `${facts.serverInfo.name} ${facts.serverInfo.version}` : '(no serverInfo)';
  const caps = Object.keys(facts.capabilities).sort().join(', ') || '(none)';
  return [
    `epoch:            ${facts.epoch}`,
    `transport:        ${facts.transport}`,
    `protocol version: ${facts.protocolVersion}`,
    `supported:        ${(facts.supportedVersions ?? [facts.protocolVersion]).join(', ')}`,
    `server:           ${server}`,
    `capabilities:     ${caps}`,
  ].join('\n');
}
