import { describe, expect, it } from 'vitest';
import { ToolHeaderRegistry } from '../../bridges/modern-to-modern/tool-header-registry.js';

const regionTool = {
  name: 'tenant-echo',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, message: { type: 'string' } } },
};
const plainTool = { name: 'echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } };
const numberTool = { name: 'bad-number', inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } } };
const dupTool = {
  name: 'bad-dup',
  inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'X' }, b: { type: 'string', 'x-mcp-header': 'x' } } },
};
const itemsTool = {
  name: 'bad-items',
  inputSchema: { type: 'object', properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'L' } } } },
};

describe('ToolHeaderRegistry: x-mcp-header specs learned from tools/list (digest §2.5)', () => {
  const cases: Array<[string, unknown[], string[], Record<string, unknown>]> = [
    ['a valid annotated tool', [regionTool], [], { 'tenant-echo': [{ name: 'Region', path: ['region'], type: 'string' }] }],
    ['a tool without annotations declares none', [plainTool], [], { echo: undefined }],
    ['number-typed annotation is invalid', [numberTool], ['bad-number'], { 'bad-number': undefined }],
    ['case-insensitive duplicate is invalid', [dupTool], ['bad-dup'], { 'bad-dup': undefined }],
    ['annotation under items is invalid', [itemsTool], ['bad-items'], { 'bad-items': undefined }],
    ['mixed page', [regionTool, numberTool, plainTool], ['bad-number'], { 'tenant-echo': [{ name: 'Region', path: ['region'], type: 'string' }], echo: undefined }],
    ['junk entries are skipped', [null, 7, { inputSchema: {} }], [], {}],
  ];
  it.each(cases)('%s', (_name, tools, invalid, specs) => {
    const registry = new ToolHeaderRegistry();
    expect(registry.learn(tools).map((t) => t.name)).toEqual(invalid);
    for (const [tool, expected] of Object.entries(specs)) expect(registry.specsFor(tool)).toEqual(expected);
  });

  it('a later list that makes a tool invalid forgets its specs', () => {
    const registry = new ToolHeaderRegistry();
    registry.learn([regionTool]);
    expect(registry.knows('tenant-echo')).toBe(true);
    registry.learn([{ name: 'tenant-echo', inputSchema: numberTool.inputSchema }]);
    expect(registry.knows('tenant-echo')).toBe(false);
    expect(registry.specsFor('tenant-echo')).toBeUndefined();
  });

  it('ignores a result without a tools array', () => {
    expect(new ToolHeaderRegistry().learn(undefined)).toEqual([]);
  });
});
