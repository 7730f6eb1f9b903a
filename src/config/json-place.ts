import type { Node } from 'jsonc-parser';
import { BridgeError } from '../errors.js';

/** `file:line:column` (1-based) of a character offset in `text`. */
export function placeOf(text: string, file: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `${file}:${line}:${offset - lineStart + 1}`;
}

/** `${NAME}` references in a config string; `$${` writes a literal `${`. */
const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Typed reads of a parsed JSONC tree that fail with the node's position: every
 * string value has its `${ENV}` references expanded, and a variable that is
 * not set is an error naming it.
 */
export class JsonPlace {
  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  fail(node: Node, message: string): BridgeError {
    return new BridgeError('BRIDGE_ERR_USAGE', `${placeOf(this.text, this.file, node.offset)}: ${message}`);
  }

  /** An object's properties as [key, value node, key node]; a key given twice is an error. */
  props(node: Node): Array<[string, Node, Node]> {
    const seen = new Set<string>();
    const out: Array<[string, Node, Node]> = [];
    for (const prop of node.children ?? []) {
      const [keyNode, value] = prop.children ?? [];
      if (!keyNode || !value) continue;
      const key = String(keyNode.value);
      if (seen.has(key)) throw this.fail(keyNode, `key "${key}" is given twice`);
      seen.add(key);
      out.push([key, value, keyNode]);
    }
    return out;
  }

  object(node: Node, where: string): Node {
    if (node.type !== 'object') throw this.fail(node, `${where} must be an object`);
    return node;
  }

  string(node: Node, where: string): string {
    if (node.type !== 'string') throw this.fail(node, `${where} must be a string`);
    return this.expand(node, node.value as string, where);
  }

  strings(node: Node, where: string): string[] {
    if (node.type !== 'array') throw this.fail(node, `${where} must be an array of strings`);
    return (node.children ?? []).map((item, i) => this.string(item, `${where}[${i}]`));
  }

  stringMap(node: Node, where: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of this.props(this.object(node, where))) out[key] = this.string(value, `${where}.${key}`);
    return out;
  }

  boolean(node: Node, where: string): boolean {
    if (node.type !== 'boolean') throw this.fail(node, `${where} must be true or false`);
    return node.value as boolean;
  }

  integer(node: Node, where: string, min: number): number {
    const n = node.type === 'string' ? Number(this.string(node, where)) : node.type === 'number' ? (node.value as number) : NaN;
    if (!Number.isInteger(n) || n < min) throw this.fail(node, `${where} must be a whole number ≥ ${min}`);
    return n;
  }

  /** A string or a number, as the text a flag would carry. */
  scalar(node: Node, where: string): string {
    if (node.type === 'number') return String(node.value);
    if (node.type === 'string') return this.string(node, where);
    throw this.fail(node, `${where} must be a string or a number`);
  }

  private expand(node: Node, raw: string, where: string): string {
    return raw.replace(ENV_REF, (whole, name: string | undefined) => {
      if (name === undefined) return '${';
      const value = this.env[name];
      if (value === undefined) throw this.fail(node, `${where} refers to \${${name}}, which is not set in the environment`);
      return value;
    });
  }
}
