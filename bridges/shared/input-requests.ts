import { randomUUID } from 'node:crypto';
import { LEGACY_FEATURES } from '../../src/epochs/versions.js';

/**
 * Embedded MRTR input requests (digest §1.7) ↔ legacy server→client requests
 * (digest §4.4): which ones a legacy client can answer given its revision and
 * its `initialize` capabilities, the params it expects, and the bare result a
 * modern retry carries in `inputResponses` (digest §5.3 case B).
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One embedded input request: a bare `{method, params}` with no id and no envelope. */
export interface InputRequest {
  method: string;
  params?: Obj;
}

/** The request to send to the legacy client, and the url-mode id the bridge made up for it. */
export interface LegacyServerRequest {
  method: string;
  params: Obj | undefined;
  elicitationId?: string;
}

/**
 * The `inputRequests` map of an `input_required` result as `[key, request]`
 * pairs, or a message saying why it is malformed.
 */
export function parseInputRequests(value: unknown): { entries: [string, InputRequest][] } | { problem: string } {
  if (value === undefined) return { entries: [] };
  if (!isObj(value)) return { problem: 'inputRequests is not an object' };
  const entries: [string, InputRequest][] = [];
  for (const [key, req] of Object.entries(value)) {
    if (!isObj(req) || typeof req.method !== 'string') return { problem: `inputRequests.${key} is not a {method, params} object` };
    if (req.params !== undefined && !isObj(req.params)) return { problem: `inputRequests.${key}.params is not an object` };
    entries.push([key, req.params === undefined ? { method: req.method } : { method: req.method, params: req.params }]);
  }
  return { entries };
}

type GapCheck = (params: Obj, caps: Obj, version: string) => string | undefined;

function usesSamplingTools(params: Obj): boolean {
  return params.tools !== undefined || params.toolChoice !== undefined;
}

/**
 * Per embedded method: why this legacy client cannot answer it, or undefined.
 * Revision gaps come first (digest §5.3 case B step 4), then what the client
 * declared at initialize (an empty `elicitation: {}` is form mode).
 */
const GAPS: Record<string, GapCheck> = {
  'elicitation/create': (params, caps, version) => {
    const url = params.mode === 'url';
    if (!LEGACY_FEATURES.elicitation(version)) return `a ${version} client cannot answer elicitation/create (elicitation exists from 2025-06-18)`;
    if (url && !LEGACY_FEATURES.urlElicitation(version)) return `a ${version} client cannot answer url-mode elicitation (it exists from 2025-11-25)`;
    const el = caps.elicitation;
    if (!isObj(el)) return 'the client did not declare the elicitation capability';
    const declaresUrl = el.url !== undefined;
    const declaresForm = el.form !== undefined || !declaresUrl;
    if (url && !declaresUrl) return 'the client did not declare url-mode elicitation (elicitation.url)';
    if (!url && !declaresForm) return 'the client did not declare form-mode elicitation (elicitation.form)';
    return undefined;
  },
  'sampling/createMessage': (params, caps, version) => {
    const tools = usesSamplingTools(params);
    if (tools && !LEGACY_FEATURES.samplingTools(version)) return `a ${version} client cannot sample with tools (sampling tools exist from 2025-11-25)`;
    const s = caps.sampling;
    if (!isObj(s)) return 'the client did not declare the sampling capability';
    if (tools && s.tools === undefined) return 'the client did not declare sampling with tools (sampling.tools)';
    return undefined;
  },
  'roots/list': (_params, caps) => (isObj(caps.roots) ? undefined : 'the client did not declare the roots capability'),
};

/**
 * Why a legacy client at `clientVersion` with these `initialize` capabilities
 * cannot answer `req`; undefined when it can.
 */
export function inputRequestGap(req: InputRequest, clientVersion: string, clientCapabilities: unknown): string | undefined {
  const check = GAPS[req.method];
  if (!check) return `${req.method} is not an input request a legacy client can answer`;
  return check(req.params ?? {}, isObj(clientCapabilities) ? clientCapabilities : {}, clientVersion);
}

/**
 * The legacy server→client request for one embedded request. A 2025-11-25 url
 * elicitation gets the `elicitationId` that revision requires and 2026 removed
 * (digest §1.5, §5.3 case B step 2); a 2025-06-18 form elicitation loses the
 * `mode` field that revision does not have. Everything else passes untouched.
 */
export function toLegacyServerRequest(req: InputRequest, clientVersion: string, mintId: () => string = randomUUID): LegacyServerRequest {
  if (req.method !== 'elicitation/create' || !req.params) return { method: req.method, params: req.params };
  const params = { ...req.params };
  if (params.mode === 'url') {
    if (typeof params.elicitationId === 'string') return { method: req.method, params, elicitationId: params.elicitationId };
    const elicitationId = mintId();
    return { method: req.method, params: { ...params, elicitationId }, elicitationId };
  }
  if (!LEGACY_FEATURES.urlElicitation(clientVersion)) delete params.mode;
  return { method: req.method, params };
}

/**
 * The bare result a retry carries in `inputResponses[key]`: the client's result
 * without `resultType` and `_meta`, which 2026 input responses do not have
 * (digest §1.7 "Embedded responses are the bare result objects").
 */
export function toInputResponse(result: Record<string, unknown>): Obj {
  const out: Obj = { ...result };
  delete out.resultType;
  delete out._meta;
  return out;
}
