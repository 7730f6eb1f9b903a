import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { UpstreamFacts } from '../contracts/upstream.js';
import type { CliFlags } from '../daemon/config-from-flags.js';
import type { UpstreamTarget } from '../daemon/options.js';
import { EPOCHS, type Epoch } from '../epochs/versions.js';
import { BridgeError } from '../errors.js';
import { maskUrlCredentials } from '../log.js';
import { canonicalJson } from '../links/canonical-json.js';
import { JsonPlace, placeOf } from './json-place.js';
import { BRIDGE_KEYS } from './bridge-keys.js';
import { oauthFlagsFrom } from './server-oauth.js';
import type { OAuthFlags } from '../links/oauth/oauth-config.js';

/** One entry of `mcpServers`, resolved: `${ENV}` expanded, every value checked. */
export interface ServerEntry {
  name: string;
  upstream: UpstreamTarget;
  /** What `type` / `transport` declared, checked against the probe's answer. */
  transport?: UpstreamFacts['transport'];
  epoch?: 'auto' | Epoch;
  poolMax?: number;
  callTimeoutMs?: number;
  allowTools?: string[];
  denyTools?: string[];
  /**
   * The bridge's OAuth toward a URL server, as the `--oauth-*` flags it stands
   * for (`"oauth": {...}`); `false` when the entry turns it off. Absent: on with
   * the defaults, unless `headers` has an Authorization (as for `--upstream`).
   */
  oauth?: OAuthFlags | false;
  /** The entry's resolved value as canonical JSON: equal on reload means unchanged (its sessions stay). */
  fingerprint: string;
}

/** A desktop-client config file read for the bridge. */
export interface ServersConfig {
  file: string;
  /** The top-level `"bridge"` object, as the CLI flags it stands for (command-line flags win). */
  bridge: CliFlags;
  servers: ServerEntry[];
}

/** The desktop-client `type` / `transport` values and the transport each means. */
const TRANSPORTS: Record<string, UpstreamFacts['transport']> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamableHttp: 'streamable-http',
  sse: 'http+sse',
  ws: 'ws',
  websocket: 'ws',
};

const SERVER_KEYS = new Set(['command', 'args', 'env', 'cwd', 'url', 'headers', 'type', 'transport', 'disabled', 'epoch', 'pool', 'callTimeout', 'allowTools', 'denyTools', 'oauth']);
const NAME = /^[A-Za-z0-9._-]+$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses the desktop-client format (`{"mcpServers": {"<name>": {...}}}`) plus
 * the bridge's own keys. Every problem throws BRIDGE_ERR_USAGE (exit 2) naming
 * `file:line:column` and the key; comments are allowed (JSONC), as some clients write them.
 */
export function parseServersConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): ServersConfig {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true });
  const place = (node: Node | number) => placeOf(text, file, typeof node === 'number' ? node : node.offset);
  if (errors.length > 0) throw fail(place(errors[0].offset), `not valid JSON (${printParseErrorCode(errors[0].error)})`);
  if (!root || root.type !== 'object') throw fail(place(root ?? 0), 'the file must hold one JSON object with "mcpServers"');
  const p = new JsonPlace(text, file, env);
  let servers: ServerEntry[] | undefined;
  let bridge: CliFlags = {};
  for (const [key, value, keyNode] of p.props(root)) {
    if (key === 'mcpServers') servers = serversFrom(p, value, file);
    else if (key === 'bridge') bridge = bridgeFrom(p, value);
    else throw p.fail(keyNode, `unknown key "${key}" (expected "mcpServers" and optionally "bridge")`);
  }
  if (!servers) throw fail(place(root), 'no "mcpServers" object');
  return { file, bridge, servers };
}

function serversFrom(p: JsonPlace, node: Node, file: string): ServerEntry[] {
  const out: ServerEntry[] = [];
  for (const [name, value, keyNode] of p.props(p.object(node, 'mcpServers'))) {
    if (!NAME.test(name) || /^\.+$/.test(name)) throw p.fail(keyNode, `server name "${name}" must be letters, digits, '.', '_' or '-' (it becomes /servers/<name>/)`);
    const entry = serverFrom(p, name, value, file);
    if (entry) out.push(entry);
  }
  return out;
}

function serverFrom(p: JsonPlace, name: string, node: Node, file: string): ServerEntry | undefined {
  const where = `mcpServers.${name}`;
  const v: Record<string, Node> = {};
  for (const [key, value, keyNode] of p.props(p.object(node, where))) {
    if (!SERVER_KEYS.has(key)) throw p.fail(keyNode, `unknown key "${key}" in ${where} (known: ${[...SERVER_KEYS].join(', ')})`);
    v[key] = value;
  }
  if (v.disabled && p.boolean(v.disabled, `${where}.disabled`)) return undefined;
  const declared = declaredTransport(p, v, where);
  if (v.command && v.url) throw p.fail(v.url, `${where} has both "command" and "url": a server is either spawned or reached`);
  let upstream: UpstreamTarget;
  if (v.command) {
    if (declared && declared !== 'stdio') throw p.fail(v.command, `${where} declares a remote transport but gives "command"`);
    for (const k of ['headers', 'oauth'] as const) if (v[k]) throw p.fail(v[k], `"${k}" applies to a "url" server`);
    const command = p.string(v.command, `${where}.command`);
    if (command === '') throw p.fail(v.command, `${where}.command is empty`);
    upstream = { kind: 'command', command, args: v.args ? p.strings(v.args, `${where}.args`) : [] };
    if (v.env) upstream.env = p.stringMap(v.env, `${where}.env`);
    if (v.cwd) upstream.cwd = p.string(v.cwd, `${where}.cwd`);
  } else if (v.url) {
    if (declared === 'stdio') throw p.fail(v.url, `${where} declares "stdio" but gives "url"`);
    for (const k of ['args', 'env', 'cwd'] as const) if (v[k]) throw p.fail(v[k], `"${k}" applies to a "command" server`);
    const url = p.string(v.url, `${where}.url`);
    if (!/^(https?|wss?):\/\//i.test(url) || !URL.canParse(url)) throw p.fail(v.url, `${where}.url must be an absolute http(s):// or ws(s):// URL (got '${maskUrlCredentials(url)}')`);
    const headers = v.headers ? p.stringMap(v.headers, `${where}.headers`) : {};
    for (const [h, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(h)) throw p.fail(v.headers, `${where}.headers: '${h}' is not a header name`);
      if (/[\r\n\0]/.test(value)) throw p.fail(v.headers, `${where}.headers.${h} must not contain CR, LF or NUL`);
    }
    upstream = { kind: 'url', url: new URL(url).href, headers };
  } else {
    throw p.fail(node, `${where} needs "command" (a stdio server) or "url" (a remote one)`);
  }
  const entry: Omit<ServerEntry, 'fingerprint'> = { name, upstream };
  if (declared) entry.transport = declared;
  if (v.epoch) {
    const epoch = p.string(v.epoch, `${where}.epoch`);
    if (epoch !== 'auto' && !(EPOCHS as readonly string[]).includes(epoch)) throw p.fail(v.epoch, `${where}.epoch must be auto, ${EPOCHS.join(', ')} (got '${epoch}')`);
    entry.epoch = epoch as ServerEntry['epoch'];
  }
  if (v.pool) entry.poolMax = p.integer(v.pool, `${where}.pool`, 1);
  if (v.callTimeout) entry.callTimeoutMs = p.integer(v.callTimeout, `${where}.callTimeout`, 1);
  if (v.allowTools) entry.allowTools = p.strings(v.allowTools, `${where}.allowTools`);
  if (v.denyTools) entry.denyTools = p.strings(v.denyTools, `${where}.denyTools`);
  if (v.oauth) {
    entry.oauth = oauthFlagsFrom(p, v.oauth, `${where}.oauth`, file);
    const header = upstream.kind === 'url' && Object.keys(upstream.headers).some((h) => h.toLowerCase() === 'authorization');
    if (header && entry.oauth !== false) throw p.fail(v.oauth, `${where} has headers.Authorization and "oauth": both say how to authorize, keep one`);
  }
  return { ...entry, fingerprint: canonicalJson(entry) };
}

function declaredTransport(p: JsonPlace, v: Record<string, Node>, where: string): UpstreamFacts['transport'] | undefined {
  let declared: UpstreamFacts['transport'] | undefined;
  for (const key of ['type', 'transport'] as const) {
    if (!v[key]) continue;
    const raw = p.string(v[key], `${where}.${key}`);
    const t = TRANSPORTS[raw];
    if (!t) throw p.fail(v[key], `${where}.${key} must be one of ${Object.keys(TRANSPORTS).join(', ')} (got '${raw}')`);
    if (declared && declared !== t) throw p.fail(v[key], `${where} has "type" and "transport" that disagree`);
    declared = t;
  }
  return declared;
}

/** The `"bridge"` object: daemon options named as the CLI's long flags in camelCase (`maxSessions` for --max-sessions). */
function bridgeFrom(p: JsonPlace, node: Node): CliFlags {
  const out: Record<string, unknown> = {};
  for (const [key, value, keyNode] of p.props(p.object(node, 'bridge'))) {
    const kind = BRIDGE_KEYS[key];
    if (!kind) throw p.fail(keyNode, `unknown key "${key}" in bridge (known: ${Object.keys(BRIDGE_KEYS).join(', ')})`);
    const where = `bridge.${key}`;
    if (kind === 'flag') out[key] = p.boolean(value, where);
    else if (kind === 'list') out[key] = p.strings(value, where);
    else if (kind === 'flag-or-value') out[key] = value.type === 'boolean' ? p.boolean(value, where) || undefined : p.scalar(value, where);
    else out[key] = p.scalar(value, where);
  }
  return out as CliFlags;
}

function fail(where: string, message: string): BridgeError {
  return new BridgeError('BRIDGE_ERR_USAGE', `${where}: ${message}`);
}
