// The 2025 set's sampling / elicitation tools, written the 2026 way: each asks
// through `input_required`. In front of it, the bridge's legacy face turns the
// embedded request into a real server→client request for the 2025 client.
import { fromJsonSchema, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { ELICITATION_SCHEMA, SEP1034_SCHEMA, SEP1330_SCHEMA } from '../shared/surface.mjs';
import { noArgs } from './content-tools.mjs';

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const withArg = (name) => fromJsonSchema({ type: 'object', properties: { [name]: { type: 'string' } }, required: [name] });

/** A tool that elicits once with `schema`; `message(args)` and `done(answer)` shape the round trip. */
function elicitTool(mcp, name, { description, schema, inputSchema = noArgs(), message, done }) {
  mcp.registerTool(name, { description, inputSchema }, async (args, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'answer');
    if (r.kind === 'elicit') return text(done(r));
    return inputRequired({ inputRequests: { answer: inputRequired.elicit({ message: message(args), requestedSchema: schema }) } });
  });
}

const completed = (r) => `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;

/** @param {import('@modelcontextprotocol/server').McpServer} mcp */
export function registerClientRequestTools(mcp) {
  mcp.registerTool('test_sampling', { description: 'Asks the client to sample (tools-call-sampling)', inputSchema: withArg('prompt') }, async ({ prompt }, ctx) => {
    const r = inputResponse(ctx.mcpReq.inputResponses, 'llm');
    if (r.kind === 'sampling') {
      const c = r.result.content;
      return text(`LLM response: ${c && c.type === 'text' ? c.text : JSON.stringify(c)}`);
    }
    return inputRequired({ inputRequests: { llm: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 }) } });
  });

  elicitTool(mcp, 'test_elicitation', {
    description: 'Asks the user (tools-call-elicitation)',
    schema: ELICITATION_SCHEMA,
    inputSchema: withArg('message'),
    message: (args) => args.message,
    done: (r) => `User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`,
  });
  elicitTool(mcp, 'test_elicitation_sep1034_defaults', { description: 'Elicitation with defaults (SEP-1034)', schema: SEP1034_SCHEMA, message: () => 'Please review the defaults', done: completed });
  elicitTool(mcp, 'test_elicitation_sep1330_enums', { description: 'Elicitation with the five enum shapes (SEP-1330)', schema: SEP1330_SCHEMA, message: () => 'Please pick from the enums', done: completed });
}
