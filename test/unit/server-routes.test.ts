import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { FaceUnit, Handler } from '../../src/faces/face-unit.js';
import { ServerRoutes } from '../../src/faces/server-routes.js';

/** A stand-in unit that names the route it was asked for, for the routes a FaceUnit has (the router is under test, not the unit). */
function unit(name: string): FaceUnit {
  const subs = ['/mcp', '/sse', '/messages'];
  return { handlerFor: (method: string, sub: string, base: string) => (subs.includes(sub) ? ((() => `${name} ${method} ${sub} ${base}`) as unknown as Handler) : undefined) } as unknown as FaceUnit;
}
const req = (url: string, method = 'POST', baseUrl?: string) => ({ url, method, headers: {}, ...(baseUrl !== undefined ? { baseUrl } : {}) }) as unknown as IncomingMessage;
const routed = (routes: ServerRoutes, url: string, method?: string, baseUrl?: string) => (routes.handlerFor(req(url, method, baseUrl)) as unknown as (() => string) | undefined)?.();

describe('ServerRoutes', () => {
  const named = new ServerRoutes({ named: true });
  named.set('alpha', { face: unit('alpha'), state: 'ready' });
  named.set('Beta.2', { face: unit('Beta.2'), state: 'ready' });

  const cases: Array<[string, string | undefined, string | undefined]> = [
    ['/servers/alpha/mcp', 'POST', 'alpha POST /mcp /servers/alpha'],
    ['/servers/alpha/MCP/', 'POST', 'alpha POST /mcp /servers/alpha'],
    ['/servers/alpha/mcp?x=1', 'POST', 'alpha POST /mcp /servers/alpha'],
    ['/servers/alpha/sse', 'GET', 'alpha GET /sse /servers/alpha'],
    ['/servers/alpha/sse', 'HEAD', 'alpha GET /sse /servers/alpha'],
    ['/servers/Beta.2/messages', 'POST', 'Beta.2 POST /messages /servers/Beta.2'],
    ['/servers/beta.2/mcp', 'POST', undefined], // names match case-sensitively
    ['/servers/gamma/mcp', 'POST', undefined],
    ['/servers/alpha/ws', 'GET', undefined], // only an upgrade reaches /ws
    ['/mcp', 'POST', undefined], // two servers: the root serves none
    ['/servers/alpha/mcp/extra', 'POST', undefined],
  ];
  it.each(cases)('%s %s → %s', (url, method, expected) => {
    expect(routed(named, url, method)).toBe(expected);
  });

  it('an express mount path is kept in the base (the http+sse endpoint URL)', () => {
    expect(routed(named, '/servers/alpha/sse', 'GET', '/tools')).toBe('alpha GET /sse /tools/servers/alpha');
  });

  it('with one server the root routes reach it too, and stop when a second is added', () => {
    const r = new ServerRoutes({ named: true });
    r.set('only', { face: unit('only'), state: 'ready' });
    expect(routed(r, '/mcp')).toBe('only POST /mcp ');
    expect(routed(r, '/SSE/', 'GET')).toBe('only GET /sse ');
    r.set('second', { face: unit('second'), state: 'ready' });
    expect(routed(r, '/mcp')).toBeUndefined();
    r.delete('second');
    expect(routed(r, '/mcp')).toBe('only POST /mcp ');
  });

  it('GET /servers lists; a single-upstream table has no /servers routes', () => {
    const list = new ServerRoutes({ named: true, list: () => ({ servers: [{ name: 'x', state: 'ready' }] }) });
    let body = '';
    const res = { writeHead: () => res, end: (b: string) => void (body = b) } as unknown as ServerResponse;
    list.handlerFor(req('/servers/', 'GET'))!(req('/servers/', 'GET'), res);
    expect(JSON.parse(body)).toEqual({ servers: [{ name: 'x', state: 'ready' }] });
    expect(list.handlerFor(req('/servers', 'POST'))).toBeUndefined();
    const single = new ServerRoutes({ named: false });
    single.set('default', { face: unit('default'), state: 'ready' });
    expect(routed(single, '/servers')).toBeUndefined();
    expect(routed(single, '/servers/default/mcp')).toBeUndefined();
    expect(routed(single, '/mcp')).toBe('default POST /mcp ');
  });

  it('a server that is not up answers its MCP routes 503 with its state, and nothing else', () => {
    const r = new ServerRoutes({ named: true });
    r.set('slow', { face: undefined, state: 'waiting' });
    const written: Array<[number, string]> = [];
    const res = { headersSent: false, writeHead: (status: number) => (written.push([status, '']), res), end: (b: string) => void (written[written.length - 1][1] = b) } as unknown as ServerResponse;
    r.handlerFor(req('/servers/slow/mcp'))!(req('/servers/slow/mcp'), res);
    expect(written[0][0]).toBe(503);
    expect(JSON.parse(written[0][1]).error.message).toContain("server 'slow' is not up (state: waiting)");
    expect(r.handlerFor(req('/servers/slow/other'))).toBeUndefined();
  });
});
