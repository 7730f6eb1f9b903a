// Prompts and completion (prompts-*, completion-complete), on SDK v1.
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { z } from 'zod';
import { PROMPT_MESSAGES, complete } from '../shared/surface.mjs';

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerPrompts(mcp) {
  mcp.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A prompt without arguments' }, async () => ({
    messages: PROMPT_MESSAGES.test_simple_prompt(),
  }));
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with two required arguments',
      // A completable argument makes SDK v1 declare `completions` and answer completion/complete.
      argsSchema: { arg1: completable(z.string().describe('First test argument'), complete), arg2: z.string().describe('Second test argument') },
    },
    async (args) => ({ messages: PROMPT_MESSAGES.test_prompt_with_arguments(args) }),
  );
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    { title: 'Prompt With Embedded Resource', description: 'Embeds the resource it is given', argsSchema: { resourceUri: z.string().describe('URI to embed') } },
    async (args) => ({ messages: PROMPT_MESSAGES.test_prompt_with_embedded_resource(args) }),
  );
  mcp.registerPrompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt with an image' }, async () => ({
    messages: PROMPT_MESSAGES.test_prompt_with_image(),
  }));
}
