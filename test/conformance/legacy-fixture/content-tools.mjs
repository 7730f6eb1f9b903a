// Tools of the tools-call-* scenarios, on SDK v1: fixed content, an error,
// progress and (2025 set) logging.
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CONTENT_TOOLS, ERROR_TOOL, HEADER_TOOL, JSON_SCHEMA_TOOL, LOG_LINES, PROGRESS_STEPS, RECONNECTION_TOOL, sleep } from '../shared/surface.mjs';

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerContentTools(mcp) {
  for (const [name, tool] of Object.entries(CONTENT_TOOLS)) {
    mcp.registerTool(name, { description: tool.description, inputSchema: {} }, async () => tool.result());
  }

  // SDK v1 turns a thrown error into `{ isError: true, content: [text] }`.
  mcp.registerTool(ERROR_TOOL.name, { description: 'Always fails (tools-call-error)', inputSchema: {} }, async () => {
    throw new Error(ERROR_TOOL.message);
  });

  mcp.registerTool('test_tool_with_progress', { description: 'Reports 0, 50, 100 of 100 (tools-call-with-progress)', inputSchema: {} }, async (_args, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (const [i, progress] of PROGRESS_STEPS.entries()) {
      if (i > 0) await sleep(50);
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `step ${progress} of 100` } });
      }
    }
    return { content: [{ type: 'text', text: `progress done (token ${String(progressToken)})` }] };
  });

  mcp.registerTool('test_tool_with_logging', { description: 'Logs three info messages (tools-call-with-logging)', inputSchema: {} }, async (_args, extra) => {
    for (const [i, data] of LOG_LINES.entries()) {
      if (i > 0) await sleep(50);
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: 'legacy-fixture', data } });
    }
    return { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] };
  });

  // Over HTTP the transport keeps the events, so the result is replayed when the client reconnects.
  mcp.registerTool(RECONNECTION_TOOL.name, { description: RECONNECTION_TOOL.description, inputSchema: {} }, async (_args, extra) => {
    extra.closeSSEStream?.();
    await sleep(100);
    return { content: [{ type: 'text', text: RECONNECTION_TOOL.text }] };
  });

  mcp.registerTool(JSON_SCHEMA_TOOL.name, { description: JSON_SCHEMA_TOOL.description, inputSchema: { name: z.string().optional() } }, async (args) => ({
    content: [{ type: 'text', text: `called with ${JSON.stringify(args)}` }],
  }));
  // A legacy server knows nothing of Mcp-Param headers; the annotation is just a schema keyword to it.
  mcp.registerTool(HEADER_TOOL.name, { description: HEADER_TOOL.description, inputSchema: { region: z.string(), note: z.string().optional() } }, async (args) => HEADER_TOOL.result(args));
  listRawSchemas(mcp, [JSON_SCHEMA_TOOL, HEADER_TOOL]);
}

/**
 * SDK v1 lists an inputSchema it derives from zod, which cannot say `$defs`,
 * `if` or `x-mcp-header`; these tools are listed with their raw schema.
 */
function listRawSchemas(mcp, tools) {
  const raw = new Map(tools.map((t) => [t.name, t.inputSchema]));
  const sdkList = mcp.server._requestHandlers.get('tools/list');
  mcp.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const listed = await sdkList(request, extra);
    return { ...listed, tools: listed.tools.map((t) => (raw.has(t.name) ? { ...t, inputSchema: raw.get(t.name) } : t)) };
  });
}
