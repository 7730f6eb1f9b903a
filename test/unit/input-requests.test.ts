import { describe, expect, it } from 'vitest';
import { inputRequestGap, parseInputRequests, toInputResponse, toLegacyServerRequest, type InputRequest } from '../../bridges/shared/input-requests.js';

const form: InputRequest = { method: 'elicitation/create', params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } } };
const bareForm: InputRequest = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: {} } } };
const url: InputRequest = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login' } };
const sampling: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };
const samplingTools: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10, tools: [] } };
const roots: InputRequest = { method: 'roots/list' };

describe('inputRequestGap', () => {
  const all = { elicitation: { form: {}, url: {} }, sampling: { tools: {} }, roots: {} };
  const cases: { name: string; req: InputRequest; version: string; caps: unknown; gap: RegExp | undefined }[] = [
    { name: '2024-11-05 cannot elicit', req: form, version: '2024-11-05', caps: all, gap: /2024-11-05 client cannot answer elicitation\/create/ },
    { name: '2025-03-26 cannot elicit', req: form, version: '2025-03-26', caps: all, gap: /2025-03-26 client cannot answer elicitation\/create/ },
    { name: '2025-06-18 form with elicitation {} is fine', req: form, version: '2025-06-18', caps: { elicitation: {} }, gap: undefined },
    { name: '2025-06-18 has no url mode', req: url, version: '2025-06-18', caps: all, gap: /url-mode elicitation \(it exists from 2025-11-25\)/ },
    { name: '2025-11-25 url needs elicitation.url', req: url, version: '2025-11-25', caps: { elicitation: {} }, gap: /did not declare url-mode/ },
    { name: '2025-11-25 url with elicitation.url is fine', req: url, version: '2025-11-25', caps: { elicitation: { url: {} } }, gap: undefined },
    { name: '2025-11-25 form needs form when only url is declared', req: bareForm, version: '2025-11-25', caps: { elicitation: { url: {} } }, gap: /did not declare form-mode/ },
    { name: 'no elicitation capability', req: form, version: '2025-11-25', caps: {}, gap: /did not declare the elicitation capability/ },
    { name: 'sampling without the capability', req: sampling, version: '2024-11-05', caps: {}, gap: /did not declare the sampling capability/ },
    { name: 'sampling on 2024-11-05 with the capability', req: sampling, version: '2024-11-05', caps: { sampling: {} }, gap: undefined },
    { name: '2025-06-18 cannot sample with tools', req: samplingTools, version: '2025-06-18', caps: all, gap: /cannot sample with tools/ },
    { name: '2025-11-25 sampling tools need sampling.tools', req: samplingTools, version: '2025-11-25', caps: { sampling: {} }, gap: /sampling\.tools/ },
    { name: '2025-11-25 sampling tools declared', req: samplingTools, version: '2025-11-25', caps: { sampling: { tools: {} } }, gap: undefined },
    { name: 'roots without the capability', req: roots, version: '2025-11-25', caps: {}, gap: /roots capability/ },
    { name: 'roots declared', req: roots, version: '2024-11-05', caps: { roots: { listChanged: true } }, gap: undefined },
    { name: 'an unknown method', req: { method: 'tasks/get' }, version: '2025-11-25', caps: all, gap: /tasks\/get is not an input request/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const gap = inputRequestGap(c.req, c.version, c.caps);
      if (c.gap === undefined) expect(gap).toBeUndefined();
      else expect(gap).toMatch(c.gap);
    });
  }
});

describe('toLegacyServerRequest', () => {
  it('gives a 2025-11-25 url elicitation a synthesized elicitationId and reports it', () => {
    const out = toLegacyServerRequest(url, '2025-11-25', () => 'id-1');
    expect(out).toEqual({ method: 'elicitation/create', params: { ...url.params, elicitationId: 'id-1' }, elicitationId: 'id-1' });
    expect(url.params).not.toHaveProperty('elicitationId');
  });

  it('mints a fresh random id per request by default', () => {
    const a = toLegacyServerRequest(url, '2025-11-25').elicitationId;
    const b = toLegacyServerRequest(url, '2025-11-25').elicitationId;
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it('drops mode from a form elicitation toward 2025-06-18 (that revision has none)', () => {
    expect(toLegacyServerRequest(form, '2025-06-18')).toEqual({ method: 'elicitation/create', params: bareForm.params });
  });

  it('keeps mode toward 2025-11-25', () => {
    expect(toLegacyServerRequest(form, '2025-11-25')).toEqual({ method: 'elicitation/create', params: form.params });
  });

  it('passes sampling and roots untouched', () => {
    expect(toLegacyServerRequest(samplingTools, '2025-11-25')).toEqual({ method: 'sampling/createMessage', params: samplingTools.params });
    expect(toLegacyServerRequest(roots, '2024-11-05')).toEqual({ method: 'roots/list', params: undefined });
  });
});

describe('parseInputRequests', () => {
  it('returns the entries in order, params optional', () => {
    expect(parseInputRequests({ a: form, b: { method: 'roots/list' } })).toEqual({ entries: [['a', form], ['b', { method: 'roots/list' }]] });
  });
  it('treats a missing map as no entries (requestState-only)', () => {
    expect(parseInputRequests(undefined)).toEqual({ entries: [] });
  });
  const bad: [string, unknown, RegExp][] = [
    ['an array', [form], /not an object/],
    ['an entry without method', { a: { params: {} } }, /inputRequests\.a is not/],
    ['params that are not an object', { a: { method: 'roots/list', params: 3 } }, /inputRequests\.a\.params/],
  ];
  for (const [name, value, problem] of bad) {
    it(`reports ${name}`, () => {
      const out = parseInputRequests(value);
      expect('problem' in out && out.problem).toMatch(problem);
    });
  }
});

describe('toInputResponse', () => {
  it('strips resultType and _meta, keeps the rest', () => {
    expect(toInputResponse({ action: 'accept', content: { name: 'x' }, _meta: { a: 1 }, resultType: 'complete' })).toEqual({ action: 'accept', content: { name: 'x' } });
  });
});
