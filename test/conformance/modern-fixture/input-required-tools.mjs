// The 2026 input-required-result-* surface, on SDK v2: every input is an
// embedded request in an `input_required` result, with sealed requestState.
import { CAPABILITY_INPUTS, MRTR_TOOLS, mrtrSummary } from '../shared/surface.mjs';
import { noArgs } from './content-tools.mjs';
import { runRounds } from './input-rounds.mjs';

const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** @param {import('@modelcontextprotocol/server').McpServer} mcp */
export function registerInputRequiredTools(mcp) {
  for (const [name, rounds] of Object.entries(MRTR_TOOLS)) {
    mcp.registerTool(name, { description: `Asks ${rounds.map((r) => r.join('+')).join(', then ')} (SEP-2322)`, inputSchema: noArgs() }, async (_args, ctx) => {
      const r = await runRounds(ctx, rounds, name);
      return r.pending ?? { content: [{ type: 'text', text: mrtrSummary(name, r.answers) }] };
    });
  }

  // input-required-result-capability-check: ask only what this request declared.
  mcp.registerTool('test_input_required_result_capabilities', { description: 'Asks only for declared capabilities (SEP-2322)', inputSchema: noArgs() }, async (_args, ctx) => {
    const caps = ctx.mcpReq.envelope?.[CAPS_KEY] ?? mcp.server.getClientCapabilities() ?? {};
    const keys = CAPABILITY_INPUTS.filter(([cap]) => caps[cap]).map(([, key]) => key);
    const r = keys.length > 0 ? await runRounds(ctx, [keys], 'capabilities') : { answers: {} };
    return r.pending ?? { content: [{ type: 'text', text: mrtrSummary('test_input_required_result_capabilities', r.answers) }] };
  });

  // input-required-result-non-tool-request: input during prompts/get.
  mcp.registerPrompt('test_input_required_result_prompt', { title: 'Prompt that asks first', description: 'Elicits its context (SEP-2322)' }, async (ctx) => {
    const r = await runRounds(ctx, [['user_context']], 'prompt');
    if (r.pending) return r.pending;
    const a = r.answers.user_context;
    const context = a.action === 'accept' ? String(a.content?.context) : a.action;
    return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with context: ${context}` } }] };
  });
}
