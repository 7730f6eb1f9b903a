// The diagnostic tools server-stateless calls, on a legacy server. Inputs are
// real server→client requests; list changes are real tool/prompt
// registrations that SDK v1 announces with list_changed on every live session.
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { INPUTS } from '../shared/surface.mjs';

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError } : {}) });

/** Process-wide toggles, so every session (HTTP) sees the same lists. */
const dynamic = { tool: false, prompt: false };
const live = new Map(); // McpServer → { tool?, prompt? } registrations

function applyDynamic(mcp) {
  const handles = live.get(mcp);
  if (dynamic.tool && !handles.tool) {
    handles.tool = mcp.registerTool('test_dynamic_tool', { description: 'Appears after test_trigger_tool_change', inputSchema: {} }, async () => text('dynamic'));
  } else if (!dynamic.tool && handles.tool) {
    handles.tool.remove();
    handles.tool = undefined;
  }
  if (dynamic.prompt && !handles.prompt) {
    handles.prompt = mcp.registerPrompt('test_dynamic_prompt', { description: 'Appears after test_trigger_prompt_change' }, async () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'dynamic' } }],
    }));
  } else if (!dynamic.prompt && handles.prompt) {
    handles.prompt.remove();
    handles.prompt = undefined;
  }
}

function toggle(kind) {
  dynamic[kind] = !dynamic[kind];
  for (const mcp of live.keys()) applyDynamic(mcp);
}

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerProbeTools(mcp) {
  live.set(mcp, {});
  const prevClose = mcp.server.onclose;
  mcp.server.onclose = () => {
    live.delete(mcp);
    prevClose?.();
  };
  applyDynamic(mcp);

  // Needs sampling whatever the client declared: the request goes out, so a
  // bridge in front sees a server request the modern caller did not allow.
  mcp.registerTool('test_missing_capability', { description: 'Needs sampling from the client', inputSchema: {} }, async (_args, extra) => {
    try {
      const r = await extra.sendRequest(INPUTS.missing_capability, CreateMessageResultSchema);
      return text(`sampled: ${r.content?.type === 'text' ? r.content.text : r.content?.type}`);
    } catch (err) {
      return text(`sampling refused: ${err.message}`, true);
    }
  });

  mcp.registerTool('test_streaming_elicitation', { description: 'Progress, then one elicitation', inputSchema: {} }, async (_args, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } });
    const r = await extra.sendRequest(INPUTS.streaming, ElicitResultSchema);
    return text(`streamed: ${r.action}`);
  });

  // Logs unconditionally: whoever relays it must drop it for callers that set no logLevel.
  mcp.registerTool('test_logging_tool', { description: 'Emits one info log message', inputSchema: {} }, async (_args, extra) => {
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'legacy-fixture', data: 'diagnostic log line' } });
    return text('logged');
  });

  mcp.registerTool('test_trigger_tool_change', { description: 'Adds or removes test_dynamic_tool', inputSchema: {} }, async () => {
    toggle('tool');
    return text(`test_dynamic_tool ${dynamic.tool ? 'added' : 'removed'}`);
  });

  mcp.registerTool('test_trigger_prompt_change', { description: 'Adds or removes test_dynamic_prompt', inputSchema: {} }, async () => {
    toggle('prompt');
    return text(`test_dynamic_prompt ${dynamic.prompt ? 'added' : 'removed'}`);
  });
}
