import { LEGACY_FEATURES } from '../../src/epochs/versions.js';

/**
 * Capability translation between a modern client's per-request capabilities
 * and a legacy session's fixed ones (digest §1.4, §4.1, §5.1), and the check
 * that an upstream server→client request was declared by the modern request it
 * would be embedded in (digest §1.7 server rules, §5.3 case A step 2).
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pick(source: Obj, keys: string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

/** Modern `elicitation: {}` means form only (digest §1.4). */
function elicitationModes(el: Obj): { form: boolean; url: boolean } {
  const url = el.url !== undefined;
  return { form: el.form !== undefined || !url, url };
}

/**
 * The legacy `initialize` capabilities for one modern request's capabilities,
 * limited to what the upstream's negotiated revision knows: elicitation from
 * 2025-06-18 (form only there), url mode and sampling `context`/`tools` from
 * 2025-11-25 (the same revision, hence the one gate), `roots.listChanged`
 * always false since 2026 has no roots change signal. `extensions` and
 * `tasks` are not declared (digest §5.7).
 */
export function clientCapabilitiesToLegacy(modern: unknown, upstreamVersion: string): Obj {
  const caps = isObj(modern) ? modern : {};
  const out: Obj = {};
  if (isObj(caps.experimental)) out.experimental = caps.experimental;
  if (isObj(caps.roots)) out.roots = { listChanged: false };
  if (isObj(caps.sampling)) {
    out.sampling = LEGACY_FEATURES.samplingTools(upstreamVersion) ? pick(caps.sampling, ['context', 'tools']) : {};
  }
  if (isObj(caps.elicitation) && LEGACY_FEATURES.elicitation(upstreamVersion)) {
    const modes = elicitationModes(caps.elicitation);
    if (LEGACY_FEATURES.urlElicitation(upstreamVersion)) {
      out.elicitation = pick(caps.elicitation, ['form', 'url']);
    } else if (modes.form) {
      out.elicitation = {};
    }
  }
  return out;
}

/**
 * A legacy server's capabilities as a modern `DiscoverResult` shows them:
 * everything kept (logging, completions, prompts, resources, tools, their
 * sub-flags, experimental, unknown keys) except the 2025-11-25 `tasks`, which
 * 2026 core does not have (digest §5.1, §5.7).
 */
export function serverCapabilitiesToModern(legacy: unknown): Obj {
  const out: Obj = { ...(isObj(legacy) ? legacy : {}) };
  delete out.tasks;
  return out;
}

/** A server→client request as the bridge sees it: method and params. */
export interface InputRequestLike {
  method: string;
  params?: unknown;
}

/** Per embedded method, whether the modern capabilities cover this particular request (digest §1.7 table). */
const DECLARED_BY: Record<string, (caps: Obj, params: Obj) => boolean> = {
  'elicitation/create': (caps, params) => {
    if (!isObj(caps.elicitation)) return false;
    const modes = elicitationModes(caps.elicitation);
    return params.mode === 'url' ? modes.url : modes.form;
  },
  'sampling/createMessage': (caps, params) => {
    if (!isObj(caps.sampling)) return false;
    const usesTools = params.tools !== undefined || params.toolChoice !== undefined;
    return !usesTools || caps.sampling.tools !== undefined;
  },
  'roots/list': (caps) => isObj(caps.roots),
};

/** Per embedded method, the modern capability this particular request needs (digest §1.7 table). */
const REQUIRED_BY: Record<string, (params: Obj) => Obj> = {
  'elicitation/create': (params) => ({ elicitation: params.mode === 'url' ? { url: {} } : {} }),
  'sampling/createMessage': (params) => ({ sampling: params.tools !== undefined || params.toolChoice !== undefined ? { tools: {} } : {} }),
  'roots/list': () => ({ roots: {} }),
};

/**
 * The `ClientCapabilities` object naming what an embeddable input request needs,
 * e.g. `{sampling: {}}`: the `data.requiredCapabilities` of a -32021 (digest §1.10).
 * Undefined for a method that is not embeddable.
 */
export function requiredCapability(req: InputRequestLike): Obj | undefined {
  const need = REQUIRED_BY[req.method];
  return need ? need(isObj(req.params) ? req.params : {}) : undefined;
}

/** True when `req` is an embeddable input request this modern request declared the capability for. */
export function declaresInputCapability(modernCaps: unknown, req: InputRequestLike): boolean {
  const check = DECLARED_BY[req.method];
  if (!check) return false;
  return check(isObj(modernCaps) ? modernCaps : {}, isObj(req.params) ? req.params : {});
}

/** True for the methods that may be embedded in `inputRequests` (digest §1.5). */
export function isEmbeddableInputMethod(method: string): boolean {
  return method in DECLARED_BY;
}
