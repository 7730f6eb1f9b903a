import { RpcCode } from '../jsonrpc/codes.js';
import type { RpcErrorBody } from '../jsonrpc/messages.js';

/**
 * Small shape checks for request params, shared by the modern and legacy
 * param tables. A check returns the first problem it finds, with the path
 * below the value it was given, or undefined when the value fits.
 */

export interface ShapeProblem {
  /** Keys from the checked value down to the offending one (empty: the value itself). */
  path: string[];
  /** What was expected and what came, e.g. "expected an object, received string". */
  problem: string;
}

export type Check = (value: unknown) => ShapeProblem | undefined;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON type name of a value, as a reader of the error expects it. */
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function expected(what: string, v: unknown): ShapeProblem {
  return { path: [], problem: `expected ${what}, received ${typeName(v)}` };
}

function below(key: string, p: ShapeProblem | undefined): ShapeProblem | undefined {
  return p && { path: [key, ...p.path], problem: p.problem };
}

export const anyValue: Check = () => undefined;
export const str: Check = (v) => (typeof v === 'string' ? undefined : expected('a string', v));
export const bool: Check = (v) => (typeof v === 'boolean' ? undefined : expected('a boolean', v));
export const anyObject: Check = (v) => (isObj(v) ? undefined : expected('an object', v));

/** One field of an object: required or optional, and its own check. */
export interface Field {
  required?: boolean;
  check: Check;
}

export const req = (check: Check): Field => ({ required: true, check });
export const opt = (check: Check): Field => ({ check });

/** An object whose named fields fit; other keys are not looked at (schemas allow extra keys). */
export function shape(fields: Record<string, Field>): Check {
  return (v) => {
    if (!isObj(v)) return expected('an object', v);
    for (const [key, field] of Object.entries(fields)) {
      const value = v[key];
      if (value === undefined) {
        if (field.required) return { path: [key], problem: 'missing' };
        continue;
      }
      const p = below(key, field.check(value));
      if (p) return p;
    }
    return undefined;
  };
}

/** A map of any keys whose every value fits `check` (`{ [key: string]: T }` in the schema). */
export function record(check: Check): Check {
  return (v) => {
    if (!isObj(v)) return expected('an object', v);
    for (const [key, value] of Object.entries(v)) {
      const p = below(key, check(value));
      if (p) return p;
    }
    return undefined;
  };
}

export function arrayOf(check: Check): Check {
  return (v) => {
    if (!Array.isArray(v)) return expected('an array', v);
    for (let i = 0; i < v.length; i++) {
      const p = below(String(i), check(v[i]));
      if (p) return p;
    }
    return undefined;
  };
}

/** A union told apart by a string `type` field (`PromptReference | ResourceTemplateReference`). */
export function tagged(tag: string, variants: Record<string, Check>): Check {
  return (v) => {
    if (!isObj(v)) return expected('an object', v);
    const t = v[tag];
    if (t === undefined) return { path: [tag], problem: 'missing' };
    if (typeof t !== 'string' || !Object.hasOwn(variants, t)) {
      return { path: [tag], problem: `expected one of ${Object.keys(variants).map((k) => `"${k}"`).join(', ')}, received ${typeof t === 'string' ? `"${t}"` : typeName(t)}` };
    }
    return variants[t]!(v);
  };
}

/** `params.a.b` for a problem found in a request's params. */
export function paramsPath(p: ShapeProblem): string {
  return ['params', ...p.path].join('.');
}

/** The -32602 body for a request whose params do not fit its method; `data.field` names the offending field. */
export function invalidParamsError(method: string, p: ShapeProblem): RpcErrorBody & { data: { field: string; problem: string } } {
  const field = paramsPath(p);
  return { code: RpcCode.InvalidParams, message: `Invalid params for ${method}: ${field}: ${p.problem}`, data: { field, problem: p.problem } };
}
