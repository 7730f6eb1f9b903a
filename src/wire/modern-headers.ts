/** The standard request-metadata headers of 2026 Streamable HTTP (digest §2.5, §2.6). */
import { decodeHeaderValue, encodeHeaderValue, hasInvalidHeaderChars } from './header-value.js';
import type { HeaderProblem } from './param-headers.js';

const VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** Which body field `Mcp-Name` mirrors, per method; the tasks rows are [SDK] (digest §2.5). */
const NAME_FIELD: Readonly<Record<string, string>> = Object.freeze({
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
});

/** Display names, as the spec spells them in messages. */
const H = { version: 'MCP-Protocol-Version', method: 'Mcp-Method', name: 'Mcp-Name' } as const;

/** The `Mcp-Name` value for a request, or undefined when the method has none. */
export function mcpNameFor(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const field = Object.hasOwn(NAME_FIELD, method) ? NAME_FIELD[method] : undefined;
  if (field === undefined || params === undefined) return undefined;
  const v = params[field];
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
}

/** Headers a modern HTTP client sends: MCP-Protocol-Version, Mcp-Method, Mcp-Name (encoded) when applicable. */
export function modernRequestHeaders(req: { method: string; params?: Record<string, unknown> }, protocolVersion: string): Record<string, string> {
  const out: Record<string, string> = { [H.version]: protocolVersion, [H.method]: req.method };
  const name = mcpNameFor(req.method, req.params);
  if (name !== undefined) out[H.name] = encodeHeaderValue(name);
  return out;
}

function bodyVersion(params: Record<string, unknown> | undefined): unknown {
  const meta = params?._meta;
  return meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)[VERSION_META_KEY] : undefined;
}

/** One header against its body value: missing (when required), invalid characters, bad base64, or different. */
function compare(header: string, raw: string | undefined, body: unknown, required: boolean): HeaderProblem | undefined {
  if (raw === undefined) return required ? { header, message: `Header mismatch: required header ${header} is missing`, bodyValue: body } : undefined;
  if (hasInvalidHeaderChars(raw)) return { header, message: `Header mismatch: ${header} header contains invalid characters`, headerValue: raw };
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return { header, message: `Header mismatch: ${header} header is malformed (${decoded.reason})`, headerValue: raw };
  if (body === undefined || decoded.value === String(body)) return undefined;
  return {
    header,
    message: `Header mismatch: ${header} header value '${decoded.value}' does not match body value '${String(body)}'`,
    headerValue: decoded.value,
    bodyValue: body,
  };
}

/** Checks MCP-Protocol-Version vs params._meta['io.modelcontextprotocol/protocolVersion'], Mcp-Method vs method, Mcp-Name vs body (required only for the three methods), invalid characters. Message like "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'". */
export function checkStandardHeaders(
  headers: Record<string, string | undefined>,
  body: { method: string; params?: Record<string, unknown> },
): HeaderProblem | undefined {
  const nameRequired = Object.hasOwn(NAME_FIELD, body.method);
  const nameBody = mcpNameFor(body.method, body.params);
  return (
    compare(H.version, headers['mcp-protocol-version'], bodyVersion(body.params), true) ??
    compare(H.method, headers['mcp-method'], body.method, true) ??
    (nameRequired ? compare(H.name, headers['mcp-name'], nameBody, true) : undefined)
  );
}
