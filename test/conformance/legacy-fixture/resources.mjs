// Resources, the template and subscriptions (resources-*, sep-2164, caching), on SDK v1.
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCES, TEMPLATE } from '../shared/surface.mjs';

/** @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} mcp */
export function registerResources(mcp) {
  for (const r of RESOURCES) {
    mcp.registerResource(r.name, r.uri, { title: r.title, description: r.description, mimeType: r.mimeType }, async () => ({ contents: r.contents() }));
  }
  mcp.registerResource(
    TEMPLATE.name,
    new ResourceTemplate(TEMPLATE.uriTemplate, { list: undefined }),
    { title: TEMPLATE.title, description: TEMPLATE.description, mimeType: TEMPLATE.mimeType },
    async (uri, { id }) => ({ contents: TEMPLATE.contents(uri.href, String(id)) }),
  );

  // SDK v1 has no subscription bookkeeping of its own; this session's set is enough.
  const subscribed = new Set();
  mcp.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  mcp.server.setRequestHandler(SubscribeRequestSchema, async ({ params }) => {
    subscribed.add(params.uri);
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, async ({ params }) => {
    subscribed.delete(params.uri);
    return {};
  });
}
