// Resources and the template (resources-*, sep-2164, caching), on SDK v2. The
// SDK adds the cache fields and answers unknown URIs with -32602 itself.
import { ResourceTemplate } from '@modelcontextprotocol/server';
import { RESOURCES, TEMPLATE } from '../shared/surface.mjs';

/** @param {import('@modelcontextprotocol/server').McpServer} mcp */
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
}
