// The 2025 set's server→client request tools (tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums):
// each sends one real request to the client on the call's own stream.
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ELICITATION_SCHEMA, SEP1034_SCHEMA, SEP1330_SCHEMA } from '../shared/surface.mjs';

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError } : {}) });

function elicitTool(mcp, name, description, message, requestedSchema) {
  mcp.registerTool(name, { description, inputSchema: {} }, async (_args, extra) => {
    const r = await extra.sendRequest({ method: 'elicitation/create', params: { message, requestedSchema } }, ElicitResultSchema);
    return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  });
}

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerClientRequestTools(mcp) {
  mcp.registerTool('test_sampling', { description: 'Asks the client to sample (tools-call-sampling)', inputSchema: { prompt: z.string() } }, async ({ prompt }, extra) => {
    if (!mcp.server.getClientCapabilities()?.sampling) return text('the client did not declare sampling', true);
    const r = await extra.sendRequest(
      { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 } },
      CreateMessageResultSchema,
    );
    return text(`LLM response: ${r.content?.type === 'text' ? r.content.text : JSON.stringify(r.content)}`);
  });

  mcp.registerTool('test_elicitation', { description: 'Asks the user (tools-call-elicitation)', inputSchema: { message: z.string() } }, async ({ message }, extra) => {
    if (!mcp.server.getClientCapabilities()?.elicitation) return text('the client did not declare elicitation', true);
    const r = await extra.sendRequest({ method: 'elicitation/create', params: { message, requestedSchema: ELICITATION_SCHEMA } }, ElicitResultSchema);
    return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  });

  elicitTool(mcp, 'test_elicitation_sep1034_defaults', 'Elicitation with defaults (SEP-1034)', 'Please review the defaults', SEP1034_SCHEMA);
  elicitTool(mcp, 'test_elicitation_sep1330_enums', 'Elicitation with the five enum shapes (SEP-1330)', 'Please pick from the enums', SEP1330_SCHEMA);
}
