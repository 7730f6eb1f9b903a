// Tools of the tools-call-* scenarios, on SDK v2: fixed content, an error,
// progress and logging (a 2026 server logs only to requests that set a level).
import { fromJsonSchema } from '@modelcontextprotocol/server';
import { CONTENT_TOOLS, ERROR_TOOL, HEADER_TOOL, JSON_SCHEMA_TOOL, LOG_LINES, PROGRESS_STEPS, RECONNECTION_TOOL, sleep } from '../shared/surface.mjs';

export const noArgs = () => fromJsonSchema({ type: 'object', properties: {} });

/** @param {import('@modelcontextprotocol/server').McpServer} mcp */
export function registerContentTools(mcp) {
  for (const [name, tool] of Object.entries(CONTENT_TOOLS)) {
    mcp.registerTool(name, { description: tool.description, inputSchema: noArgs() }, async () => tool.result());
  }

  mcp.registerTool(ERROR_TOOL.name, { description: 'Always fails (tools-call-error)', inputSchema: noArgs() }, async () => ({
    isError: true,
    content: [{ type: 'text', text: ERROR_TOOL.message }],
  }));

  mcp.registerTool('test_tool_with_progress', { description: 'Reports 0, 50, 100 of 100 (tools-call-with-progress)', inputSchema: noArgs() }, async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (const [i, progress] of PROGRESS_STEPS.entries()) {
      if (i > 0) await sleep(50);
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `step ${progress} of 100` } });
      }
    }
    return { content: [{ type: 'text', text: `progress done (token ${String(progressToken)})` }] };
  });

  mcp.registerTool('test_tool_with_logging', { description: 'Logs three info messages (tools-call-with-logging)', inputSchema: noArgs() }, async (_args, ctx) => {
    for (const [i, data] of LOG_LINES.entries()) {
      if (i > 0) await sleep(50);
      await ctx.mcpReq.log('info', data, 'modern-fixture');
    }
    return { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] };
  });

  // 2026 has no resumable streams; a legacy face in front decides how to serve SEP-1699.
  mcp.registerTool(RECONNECTION_TOOL.name, { description: RECONNECTION_TOOL.description, inputSchema: noArgs() }, async () => {
    await sleep(100);
    return { content: [{ type: 'text', text: RECONNECTION_TOOL.text }] };
  });

  mcp.registerTool(JSON_SCHEMA_TOOL.name, { description: JSON_SCHEMA_TOOL.description, inputSchema: fromJsonSchema(JSON_SCHEMA_TOOL.inputSchema) }, async (args) => ({
    content: [{ type: 'text', text: `called with ${JSON.stringify(args)}` }],
  }));

  // SDK v2 checks Mcp-Param-Region against `region` before the handler runs.
  mcp.registerTool(HEADER_TOOL.name, { description: HEADER_TOOL.description, inputSchema: fromJsonSchema(HEADER_TOOL.inputSchema) }, async (args) => HEADER_TOOL.result(args));
}
