// The 2026 input-required-result-* surface on a legacy server: every input is
// a real server→client request on the call's stream, so what the suite sees
// is the bridge's translation into `input_required` rounds and back.
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { CAPABILITY_INPUTS, INPUTS, MRTR_TOOLS, mrtrSummary } from '../shared/surface.mjs';

const RESULT_SCHEMAS = {
  'elicitation/create': ElicitResultSchema,
  'sampling/createMessage': CreateMessageResultSchema,
  'roots/list': ListRootsResultSchema,
};

/** Sends the inputs named by `keys` at once (one bridge round) and returns key → result. */
export async function ask(extra, keys) {
  const results = await Promise.all(keys.map((key) => extra.sendRequest(INPUTS[key], RESULT_SCHEMAS[INPUTS[key].method])));
  return Object.fromEntries(keys.map((key, i) => [key, results[i]]));
}

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerInputRequiredTools(mcp) {
  for (const [name, rounds] of Object.entries(MRTR_TOOLS)) {
    mcp.registerTool(name, { description: `Asks ${rounds.map((r) => r.join('+')).join(', then ')} (SEP-2322)`, inputSchema: {} }, async (_args, extra) => {
      const answers = {};
      for (const keys of rounds) Object.assign(answers, await ask(extra, keys));
      return { content: [{ type: 'text', text: mrtrSummary(name, answers) }] };
    });
  }

  // input-required-result-capability-check: ask only what this session's client declared.
  mcp.registerTool('test_input_required_result_capabilities', { description: 'Asks only for declared capabilities (SEP-2322)', inputSchema: {} }, async (_args, extra) => {
    const caps = mcp.server.getClientCapabilities() ?? {};
    const keys = CAPABILITY_INPUTS.filter(([cap]) => caps[cap]).map(([, key]) => key);
    const answers = keys.length > 0 ? await ask(extra, keys) : {};
    return { content: [{ type: 'text', text: mrtrSummary('test_input_required_result_capabilities', answers) }] };
  });

  // input-required-result-non-tool-request: input during prompts/get.
  mcp.registerPrompt('test_input_required_result_prompt', { title: 'Prompt that asks first', description: 'Elicits its context (SEP-2322)' }, async (extra) => {
    const { user_context } = await ask(extra, ['user_context']);
    const context = user_context.action === 'accept' ? String(user_context.content?.context) : user_context.action;
    return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with context: ${context}` } }] };
  });
}
