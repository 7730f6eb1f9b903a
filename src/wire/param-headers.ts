/**
 * `x-mcp-header` tool annotations and their `Mcp-Param-*` headers (digest §2.5
 * "Custom headers", §2.6).
 */
import { decodeHeaderValue, encodeHeaderValue, hasInvalidHeaderChars } from './header-value.js';

/** One `x-mcp-header` declaration: header `Mcp-Param-<name>` mirrors the value at `path`. */
export interface ParamHeaderSpec {
  name: string;
  path: string[];
  type: 'string' | 'integer' | 'boolean' | 'number';
}

/** Why a request's headers were refused; the face answers 400 + -32020. */
export interface HeaderProblem {
  header: string;
  message: string;
  headerValue?: string;
  bodyValue?: unknown;
}

export const PARAM_HEADER_PREFIX = 'Mcp-Param-';
const ANNOTATION = 'x-mcp-header';
// RFC 9110 §5.6.2 token = 1*tchar.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const ALLOWED_TYPES = new Set(['string', 'integer', 'boolean']);
// Keywords whose subschemas are not "statically reachable through properties" (digest §2.5, [SDK] list).
const UNREACHABLE_KEYWORDS = [
  'items', 'prefixItems', 'contains', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems',
  'propertyNames', 'patternProperties', 'dependentSchemas', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'then',
  'else', '$defs', 'definitions',
] as const;
const MAP_KEYWORDS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

type Walk = { specs: ParamHeaderSpec[]; seen: Map<string, string> };

/** Reads and validates a tool's inputSchema annotations; not ok means the tool must be dropped from tools/list. */
export function paramHeaderSpecs(inputSchema: unknown): { ok: true; specs: ParamHeaderSpec[] } | { ok: false; reason: string } {
  const walk: Walk = { specs: [], seen: new Map() };
  const reason = visit(inputSchema, [], true, walk);
  return reason === undefined ? { ok: true, specs: walk.specs } : { ok: false, reason };
}

function visit(node: unknown, path: string[], reachable: boolean, walk: Walk): string | undefined {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const schema = node as Record<string, unknown>;
  const where = path.length === 0 ? '<root>' : path.join('.');
  if (Object.hasOwn(schema, ANNOTATION)) {
    if (!reachable || path.length === 0) return `${where}: ${ANNOTATION} is only allowed on properties reachable through 'properties'`;
    const name = schema[ANNOTATION];
    if (typeof name !== 'string' || !TOKEN.test(name)) return `${where}: ${ANNOTATION} must be a non-empty RFC 9110 token`;
    // 'number' is forbidden by the spec, so the tool is dropped (digest §2.5).
    if (typeof schema.type !== 'string' || !ALLOWED_TYPES.has(schema.type)) {
      return `${where}: ${ANNOTATION} needs type string, integer or boolean, not ${String(schema.type ?? 'none')}`;
    }
    const prior = walk.seen.get(name.toLowerCase());
    if (prior !== undefined) return `${ANNOTATION} '${name}' duplicates '${prior}' (names are case-insensitive)`;
    walk.seen.set(name.toLowerCase(), name);
    walk.specs.push({ name, path, type: schema.type as ParamHeaderSpec['type'] });
  }
  const props = schema.properties;
  if (props !== null && typeof props === 'object' && !Array.isArray(props)) {
    for (const [key, child] of Object.entries(props)) {
      const r = visit(child, [...path, key], reachable, walk);
      if (r !== undefined) return r;
    }
  }
  // An annotation anywhere off the properties chain makes the tool invalid, so walk those too.
  for (const kw of UNREACHABLE_KEYWORDS) {
    const sub = schema[kw];
    if (sub === undefined) continue;
    const branches = Array.isArray(sub) ? sub : MAP_KEYWORDS.has(kw) && sub !== null && typeof sub === 'object' ? Object.values(sub) : [sub];
    for (const b of branches) {
      const r = visit(b, [...path, `<${kw}>`], false, walk);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

function valueAt(root: unknown, path: string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A header-worthy body value: primitive and, for numbers, finite and within ±(2^53−1) (digest §2.5). */
function headerable(v: unknown): v is string | number | boolean {
  if (typeof v === 'string' || typeof v === 'boolean') return true;
  return typeof v === 'number' && Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v));
}

/** Header name → encoded value ('Mcp-Param-<name>'); absent or null values give no header. */
export function paramHeadersFor(specs: ParamHeaderSpec[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const v = valueAt(args, spec.path);
    if (headerable(v)) out[PARAM_HEADER_PREFIX + spec.name] = encodeHeaderValue(v);
  }
  return out;
}

const DECIMAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function sameValue(spec: ParamHeaderSpec, decoded: string, body: string | number | boolean): boolean {
  if ((spec.type === 'integer' || spec.type === 'number') && typeof body === 'number') {
    return DECIMAL.test(decoded) && Number(decoded) === body; // 42.0 equals 42 (digest §2.6)
  }
  return decoded === String(body);
}

/** headers: lower-cased names. Missing / malformed / disagreeing Mcp-Param-* → a problem (integers compared numerically). */
export function checkParamHeaders(
  specs: ParamHeaderSpec[],
  args: unknown,
  headers: Record<string, string | undefined>,
): HeaderProblem | undefined {
  for (const spec of specs) {
    const body = valueAt(args, spec.path);
    // Null or absent in the body: the server must not expect the header (digest §2.5 "Extraction").
    if (!headerable(body)) continue;
    const header = PARAM_HEADER_PREFIX + spec.name;
    const raw = headers[header.toLowerCase()];
    if (raw === undefined) return { header, message: `Header mismatch: required header ${header} is missing`, bodyValue: body };
    if (hasInvalidHeaderChars(raw)) return { header, message: `Header mismatch: ${header} header contains invalid characters`, headerValue: raw };
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok) return { header, message: `Header mismatch: ${header} header is malformed (${decoded.reason})`, headerValue: raw };
    if (!sameValue(spec, decoded.value, body)) {
      return {
        header,
        message: `Header mismatch: ${header} header value '${decoded.value}' does not match body value '${String(body)}'`,
        headerValue: decoded.value,
        bodyValue: body,
      };
    }
  }
  return undefined;
}
