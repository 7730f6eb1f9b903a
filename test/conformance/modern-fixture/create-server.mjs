// The modern-only (2026-07-28, SDK v2) conformance fixture: a factory for one
// McpServer with the whole surface, one module per group of scenarios.
import { McpServer } from '@modelcontextprotocol/server';
import { registerClientRequestTools } from './client-request-tools.mjs';
import { registerContentTools } from './content-tools.mjs';
import { registerInputRequiredTools } from './input-required-tools.mjs';
import { stateCodec } from './input-rounds.mjs';
import { registerProbeTools } from './probe-tools.mjs';
import { registerPrompts } from './prompts.mjs';
import { registerResources } from './resources.mjs';

export const SERVER_INFO = { name: 'mcp-bridge-modern-fixture', version: '1.0.0' };
const CAPABILITIES = { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {}, completions: {} };

/** `hooks.changed(kind, mcp)` announces a tool or prompt list change on this transport. */
export function modernServerFactory(hooks) {
  return () => {
    // Tampered or expired state never reaches a handler (input-required-result-tampered-state).
    const mcp = new McpServer(SERVER_INFO, { capabilities: CAPABILITIES, requestState: { verify: stateCodec.verify } });
    registerContentTools(mcp);
    registerClientRequestTools(mcp);
    registerInputRequiredTools(mcp);
    registerProbeTools(mcp, hooks);
    registerResources(mcp);
    registerPrompts(mcp);
    return mcp;
  };
}
