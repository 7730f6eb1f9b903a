import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** What the tests count at the authorization server. */
export interface AuthCounters {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
}

/**
 * The SDK v1 authorization server (its `mcpAuthRouter`: metadata, DCR, the
 * authorize and token endpoints with PKCE) behind an in-memory provider that
 * approves every authorization at once, so a browser only follows redirects.
 */
class MemoryProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  readonly access = new Map<string, AuthInfo>();
  readonly refresh = new Map<string, { clientId: string; scopes: string[]; resource?: URL }>();
  readonly counters: AuthCounters = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0 };

  constructor(private readonly accessTtlSec: number) {}

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: async (id) => this.clients.get(id),
      registerClient: async (client) => {
        this.counters.registrations++;
        const full = client as OAuthClientInformationFull;
        this.clients.set(full.client_id, full);
        return full;
      },
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: express.Response): Promise<void> {
    this.counters.authorizations++;
    const code = randomUUID();
    this.codes.set(code, { clientId: client.client_id, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const entry = this.codes.get(code);
    if (!entry) throw new InvalidGrantError('unknown code');
    return entry.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const entry = this.codes.get(code);
    if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('unknown code');
    this.codes.delete(code);
    this.counters.codeExchanges++;
    return this.issue(client.client_id, entry.params.scopes ?? [], entry.params.resource);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, token: string): Promise<OAuthTokens> {
    const entry = this.refresh.get(token);
    if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('refresh token unknown or revoked');
    this.refresh.delete(token);
    this.counters.refreshes++;
    return this.issue(client.client_id, entry.scopes, entry.resource);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const info = this.access.get(token);
    if (!info || (info.expiresAt ?? 0) * 1000 < Date.now()) throw new InvalidTokenError('token unknown, revoked or expired');
    return info;
  }

  /** Forgets the access tokens only (the server restarted, or they were revoked one by one); refresh tokens still work. */
  revokeAccess(): void {
    this.access.clear();
  }

  /** Forgets every token it issued: what a user revoking the grant does. */
  revokeAll(): void {
    this.access.clear();
    this.refresh.clear();
  }

  private issue(clientId: string, scopes: string[], resource?: URL): OAuthTokens {
    const access = `at-${randomUUID()}`;
    const refresh = `rt-${randomUUID()}`;
    this.access.set(access, { token: access, clientId, scopes, expiresAt: Math.floor(Date.now() / 1000) + this.accessTtlSec, resource });
    this.refresh.set(refresh, { clientId, scopes, resource });
    return { access_token: access, token_type: 'Bearer', expires_in: this.accessTtlSec, refresh_token: refresh, scope: scopes.join(' ') };
  }
}

export interface AuthServer {
  issuer: string;
  provider: MemoryProvider;
  close(): Promise<void>;
}

/** The authorization server on 127.0.0.1:0. */
export async function startAuthServer(opts: { accessTtlSec?: number } = {}): Promise<AuthServer> {
  const server = createServer();
  const issuer = new URL(await listen(server)).href;
  const provider = new MemoryProvider(opts.accessTtlSec ?? 3600);
  const app = express();
  const off = { rateLimit: false as const };
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(issuer), scopesSupported: ['mcp:tools'], authorizationOptions: off, tokenOptions: off, clientRegistrationOptions: off, revocationOptions: off }));
  server.on('request', app);
  return { issuer, provider, close: () => close(server) };
}

export interface ProtectedServer {
  url: string;
  /** 401 answers sent, by JSON-RPC method. */
  refused: Map<string, number>;
  close(): Promise<void>;
}

/** How a protected server checks a bearer token: with the in-memory provider, or (`verify`) any other way, e.g. a JWT for its own URL. */
export type TokenAuthority = Pick<AuthServer, 'issuer'> & ({ provider: MemoryProvider } | { verify(token: string, resource: string): Promise<boolean> });

/**
 * A stateful SDK v1 MCP server (tool `echo`) whose `/mcp` checks the bearer
 * token with the authorization server, for every request (`all`) or only
 * `tools/call`; a refusal is a 401 naming its protected-resource metadata (RFC 9728 §5.1).
 */
export async function startProtectedServer(as: TokenAuthority, protect: 'all' | 'tools/call' = 'all'): Promise<ProtectedServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const refused = new Map<string, number>();
  const server = createServer();
  const base = await listen(server);
  const url = `${base}/mcp`;
  const prm = `${base}/.well-known/oauth-protected-resource/mcp`;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ resource: url, authorization_servers: [as.issuer], scopes_supported: ['mcp:tools'] }));
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void serve(req, res, Buffer.concat(chunks).toString('utf8')));
  });

  async function serve(req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
    const body = text === '' ? undefined : (JSON.parse(text) as { method?: string });
    const method = body && !Array.isArray(body) ? (body.method ?? '') : '';
    if (protect === 'all' || method === 'tools/call') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const ok = token !== undefined && ('verify' in as ? await as.verify(token, url) : await as.provider.verifyAccessToken(token).then(() => true, () => false));
      if (!ok) {
        refused.set(method || req.method!, (refused.get(method || req.method!) ?? 0) + 1);
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${prm}"` });
        return void res.end(JSON.stringify({ error: 'invalid_token' }));
      }
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (typeof sid === 'string' && !transport) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
    }
    if (!transport) {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const mcp = new McpServer({ name: 'protected', version: '1.0.0' });
      mcp.registerTool('echo', { description: 'answers ok' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => void sessions.set(id, created) });
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  }
  return { url, refused, close: () => close(server) };
}
