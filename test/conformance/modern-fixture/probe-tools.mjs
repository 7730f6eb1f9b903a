// The diagnostic tools server-stateless calls, on SDK v2. List changes are
// process-wide toggles; `hooks.changed(kind, mcp)` announces them (HTTP: the
// handler's bus, stdio: the connection's instance).
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { INPUTS } from '../shared/surface.mjs';
import { noArgs } from './content-tools.mjs';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const dynamic = { tool: false, prompt: false };

/** @param {import('@modelcontextprotocol/server').McpServer} mcp */
export function registerProbeTools(mcp, hooks) {
  const handles = {};
  const dynamicTool = () => mcp.registerTool('test_dynamic_tool', { description: 'Appears after test_trigger_tool_change', inputSchema: noArgs() }, async () => text('dynamic'));
  const dynamicPrompt = () =>
    mcp.registerPrompt('test_dynamic_prompt', { description: 'Appears after test_trigger_prompt_change' }, async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'dynamic' } }] }));
  const register = { tool: dynamicTool, prompt: dynamicPrompt };
  /** Makes this instance's lists match the process-wide toggles. */
  const apply = () => {
    for (const kind of ['tool', 'prompt']) {
      if (dynamic[kind] && !handles[kind]) handles[kind] = register[kind]();
      if (!dynamic[kind] && handles[kind]) {
        handles[kind].remove();
        handles[kind] = undefined;
      }
    }
  };
  apply();

  // Needs sampling: SDK v2 answers a request that did not declare it with -32021 { sampling: {} }.
  mcp.registerTool('test_missing_capability', { description: 'Needs sampling from the client', inputSchema: noArgs() }, async (_args, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'llm');
    if (r.kind === 'sampling') return text('sampled');
    return inputRequired({ inputRequests: { llm: INPUTS.missing_capability } });
  });

  mcp.registerTool('test_streaming_elicitation', { description: 'Progress, then one elicitation', inputSchema: noArgs() }, async (_args, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'go');
    if (r.kind === 'elicit') return text(`streamed: ${r.action}`);
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } });
    return inputRequired({ inputRequests: { go: INPUTS.streaming } });
  });

  // The SDK sends it only when the request set a logLevel at or below info.
  mcp.registerTool('test_logging_tool', { description: 'Emits one info log message', inputSchema: noArgs() }, async (_args, ctx) => {
    await ctx.mcpReq.log('info', 'diagnostic log line', 'modern-fixture');
    return text('logged');
  });

  for (const kind of ['tool', 'prompt']) {
    mcp.registerTool(`test_trigger_${kind}_change`, { description: `Adds or removes test_dynamic_${kind}`, inputSchema: noArgs() }, async () => {
      dynamic[kind] = !dynamic[kind];
      apply();
      hooks.changed(kind, mcp);
      return text(`test_dynamic_${kind} ${dynamic[kind] ? 'added' : 'removed'}`);
    });
  }
}
