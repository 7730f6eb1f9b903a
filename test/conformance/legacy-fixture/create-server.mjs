// One SDK v1 McpServer with the whole conformance surface, one module per
// group of scenarios. A fresh instance per session (HTTP) or per process (stdio).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerClientRequestTools } from './client-request-tools.mjs';
import { registerContentTools } from './content-tools.mjs';
import { registerInputRequiredTools } from './input-required-tools.mjs';
import { registerProbeTools } from './probe-tools.mjs';
import { registerPrompts } from './prompts.mjs';
import { registerResources } from './resources.mjs';

export const SERVER_INFO = { name: 'mcp-bridge-legacy-fixture', version: '1.0.0' };

export function createLegacyServer() {
  const mcp = new McpServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {}, completions: {} },
  });
  registerContentTools(mcp);
  registerClientRequestTools(mcp);
  registerInputRequiredTools(mcp);
  registerProbeTools(mcp);
  registerResources(mcp);
  registerPrompts(mcp);
  return mcp;
}
