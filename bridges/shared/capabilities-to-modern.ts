import { LEGACY_FEATURES } from '../../src/epochs/versions.js';

/**
 * Capability translation for a legacy client in front of a modern server
 * (digest §1.4, §4.1, §5.1): the client's `initialize` capabilities become the
 * per-request `clientCapabilities` stamped on every upstream request, and the
 * server's `DiscoverResult.capabilities` become the `InitializeResult` ones.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pick(source: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

/**
 * The modern `ClientCapabilities` of a legacy session. Only what the client's
 * negotiated revision can actually serve is declared, so the server never
 * embeds an input request the client cannot answer: elicitation from
 * 2025-06-18 (form only there; `{}` is form in both eras), url mode and
 * sampling `context`/`tools` from 2025-11-25. `roots.listChanged` is dropped
 * (2026 has no roots change signal) and so is `tasks` (digest §5.7).
 */
export function clientCapabilitiesToModern(legacy: unknown, clientVersion: string): Obj {
  const caps = isObj(legacy) ? legacy : {};
  const out: Obj = {};
  if (isObj(caps.experimental)) out.experimental = caps.experimental;
  if (isObj(caps.roots)) out.roots = {};
  if (isObj(caps.sampling)) {
    out.sampling = LEGACY_FEATURES.samplingTools(clientVersion) ? pick(caps.sampling, ['context', 'tools']) : {};
  }
  if (isObj(caps.elicitation) && LEGACY_FEATURES.elicitation(clientVersion)) {
    out.elicitation = LEGACY_FEATURES.urlElicitation(clientVersion) ? pick(caps.elicitation, ['form', 'url']) : {};
  }
  return out;
}

/**
 * The legacy `ServerCapabilities` of a modern server: the discover capabilities
 * minus `extensions` (no legacy equivalent) and `tasks` (not core in 2026).
 * List-changed and `resources.subscribe` stay: the bridge serves them through
 * `subscriptions/listen` (digest §5.4).
 */
export function serverCapabilitiesToLegacy(modern: unknown): Obj {
  const out: Obj = { ...(isObj(modern) ? modern : {}) };
  delete out.extensions;
  delete out.tasks;
  return out;
}
