import type { FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from './client-sdk.js';
import type { AuthChallenge, AuthTries, UpstreamAuth } from '../../contracts/upstream.js';
import { BridgeError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { BridgeOAuthProvider } from './bridge-oauth-provider.js';
import { CallbackServer, derivedCallbackPort } from './callback-server.js';
import { acquireFlowLock } from './flow-lock.js';
import type { OAuthConfig } from './oauth-config.js';
import { failureReason, withReason, type OAuthObserver } from './oauth-observer.js';
import { openAuthorizationUrl } from './open-browser.js';
import { TokenStore, type KeptTokens } from './token-store.js';

/** A token this close to its expiry is refreshed before it is sent. */
const EXPIRY_SKEW_MS = 60_000;
/** Waiting for another bridge's flow may take its whole browser timeout, and a little more. */
const LOCK_SLACK_MS = 30_000;

/** What a flow is asked to achieve. */
interface FlowRequest {
  /** The Authorization value the failed request carried; the flow is skipped when the stored tokens differ by now. */
  sent?: string;
  /** `scope` of the challenge. */
  scope?: string;
  resourceMetadataUrl?: URL;
  /** A 403 insufficient_scope: ask again with the union of scopes. */
  stepUp?: boolean;
  /** Refresh only: never open a browser for it. */
  refreshOnly?: boolean;
}

/** The HTTP(S) URL of the protected resource: a WebSocket upstream's handshake is an HTTP request to the same place. */
export function resourceServerUrl(upstream: string): URL {
  const url = new URL(upstream);
  if (url.protocol === 'ws:') url.protocol = 'http:';
  else if (url.protocol === 'wss:') url.protocol = 'https:';
  return url;
}

function bearer(t: KeptTokens | undefined): string | undefined {
  if (!t?.access_token) return undefined;
  // RFC 6750 §2.1; a token_type other than Bearer (DPoP) is not supported by this client.
  return `Bearer ${t.access_token}`;
}

/**
 * The MCP authorization flow toward one upstream (spec: basic/authorization),
 * run by the SDK's `auth()` behind the bridge's own provider: discovery
 * (RFC 9728, RFC 8414 / OpenID), registration (pre-registered, metadata
 * document, RFC 7591), authorization code + PKCE through a loopback callback
 * (or client_credentials), refresh, step-up. One flow at a time in this
 * process, and one across processes under the flow lock.
 */
export class UpstreamOAuth implements UpstreamAuth {
  readonly store: TokenStore;
  private readonly serverUrl: URL;
  private readonly log: Logger;
  private readonly provider: BridgeOAuthProvider;
  private current: KeptTokens | undefined;
  private loaded = false;
  private flow: Promise<void> | undefined;
  /** Scopes asked for so far: a step-up asks for their union with the challenge's (spec: scope challenge handling). */
  private requested: string | undefined;
  private resourceMetadataUrl: URL | undefined;
  /** Only a flow with a callback listening may send the user to the browser (a refresh that fell through may not). */
  private browserAllowed = false;
  /** The loopback callback of the flow waiting for a browser, if any: close() frees its port. */
  private callback: CallbackServer | undefined;
  private closed = false;

  constructor(
    readonly upstream: string,
    private readonly cfg: OAuthConfig,
    logger: Logger,
    /** Told of each refresh and each failure (the bridge's metrics). */
    private readonly observer?: OAuthObserver,
  ) {
    this.serverUrl = resourceServerUrl(upstream);
    this.log = logger.child({ oauth: `${this.serverUrl.origin}${this.serverUrl.pathname}` });
    this.store = new TokenStore(cfg.dir, { upstream, resource: cfg.resource, clientId: cfg.clientId });
    this.provider = new BridgeOAuthProvider(this.store, cfg, (url) => {
      if (this.browserAllowed) openAuthorizationUrl(url, { upstream, noBrowser: cfg.noBrowser, logger: this.log });
    });
  }

  headerNow(): string | undefined | null {
    if (!this.loaded || this.dueForRefresh()) return null;
    return bearer(this.current);
  }

  private dueForRefresh(): boolean {
    const t = this.current;
    return t?.expires_at !== undefined && Date.now() > t.expires_at - EXPIRY_SKEW_MS && (t.refresh_token !== undefined || this.cfg.grant === 'client_credentials');
  }

  async header(): Promise<string | undefined> {
    if (!this.loaded) await this.reload();
    const t = this.current;
    if (this.dueForRefresh()) {
      // A failed refresh is not this request's end: it goes out with what there is, and a 401 runs the whole flow.
      await this.run({ sent: bearer(t), refreshOnly: true }).catch((err: Error) => this.log.warn('oauth.refresh.failed', { error: err.message }));
    }
    return bearer(this.current);
  }

  async challenged(c: AuthChallenge, sent: string | undefined, tries: AuthTries): Promise<boolean> {
    if (c.status !== 401 && c.status !== 403) return false;
    const { extractWWWAuthenticateParams } = await clientSdk();
    const params = c.wwwAuthenticate ? extractWWWAuthenticateParams(new Response(null, { headers: { 'www-authenticate': c.wwwAuthenticate } })) : {};
    if (params.resourceMetadataUrl) this.resourceMetadataUrl = params.resourceMetadataUrl;
    if (c.status === 403) {
      if (params.error !== 'insufficient_scope') return false;
      if (tries.stepUps >= this.cfg.maxStepUps) {
        this.observer?.failed('insufficient_scope');
        throw new BridgeError('BRIDGE_ERR_AUTH', `the upstream still answered 403 insufficient_scope after ${tries.stepUps} step-up authorization(s)${params.scope ? ` (it asks for scope '${params.scope}')` : ''}: grant those scopes, or pass them with --oauth-scope`);
      }
      tries.stepUps++;
      this.log.info('oauth.step-up', { scope: params.scope });
      await this.run({ sent, scope: params.scope, stepUp: true });
      return true;
    }
    if (tries.unauthorized >= 1) {
      // Fresh credentials and still refused: the next attempt discovers again (the authorization servers may have moved).
      await this.provider.invalidateCredentials('discovery');
      this.observer?.failed('still_unauthorized');
      throw new BridgeError('BRIDGE_ERR_AUTH', `the upstream still answered 401 after authorization: run mcp-bridge logout ${this.cfg.commandTarget ?? this.upstream}, then mcp-bridge login ${this.cfg.commandTarget ?? this.upstream}`);
    }
    tries.unauthorized++;
    this.log.info('oauth.unauthorized', { hadToken: sent !== undefined, error: params.error });
    await this.run({ sent, scope: params.scope, resourceMetadataUrl: params.resourceMetadataUrl });
    return true;
  }

  /** `mcp-bridge login`: authorize now, whatever is stored. */
  async login(): Promise<void> {
    await this.run({ sent: bearer((await this.store.read()).tokens) ?? '' });
    if (!this.current) throw new BridgeError('BRIDGE_ERR_AUTH', 'the flow ended without tokens');
  }

  private async reload(): Promise<void> {
    this.current = (await this.store.read()).tokens;
    this.loaded = true;
  }

  /** One flow at a time in this process: a call that finds one running waits for it. A failed flow is counted once. */
  private run(req: FlowRequest): Promise<void> {
    if (this.flow) return this.flow;
    const flow = this.locked(req)
      .catch((err: unknown) => {
        // A flow ended by close() did not fail: its server went away.
        if (!this.closed) this.observer?.failed(failureReason(err));
        throw err;
      })
      .finally(() => {
        if (this.flow === flow) this.flow = undefined;
      });
    this.flow = flow;
    return flow;
  }

  private async locked(req: FlowRequest): Promise<void> {
    const release = await acquireFlowLock(this.cfg.dir, this.store.lockTarget, this.cfg.timeoutMs + LOCK_SLACK_MS).catch((err: Error) => {
      throw withReason(err, 'flow_lock');
    });
    try {
      await this.reload();
      // Another bridge (or an earlier flow here) stored other tokens meanwhile: use them.
      if (!req.stepUp && bearer(this.current) !== undefined && bearer(this.current) !== req.sent) {
        this.log.info('oauth.tokens.shared');
        return;
      }
      if (req.refreshOnly && this.cfg.grant === 'authorization_code' && !this.current?.refresh_token) return;
      await this.authorize(req);
      await this.reload();
    } finally {
      await release().catch(() => undefined);
    }
  }

  private async authorize(req: FlowRequest): Promise<void> {
    const { auth, computeScopeUnion, isStrictScopeSuperset } = await clientSdk();
    const interactive = this.cfg.grant === 'authorization_code';
    const callback = interactive && !req.refreshOnly ? await CallbackServer.listen(this.cfg.callbackPort ?? derivedCallbackPort(this.upstream), this.cfg.callbackPort === undefined) : undefined;
    // close() may have run before this flow began or while its callback was still binding.
    if (this.closed) {
      await callback?.close();
      throw new BridgeError('BRIDGE_ERR_AUTH', 'the OAuth flow was stopped (the server was removed or the bridge is stopping)');
    }
    this.callback = callback;
    this.browserAllowed = callback !== undefined;
    // A refresh needs no callback, but the provider must name the redirect URI the registration was made for.
    this.provider.redirectTarget = callback?.redirectUrl ?? (interactive ? `http://127.0.0.1:${this.cfg.callbackPort ?? derivedCallbackPort(this.upstream)}/oauth/callback` : undefined);
    const tokens = this.current;
    let scope = this.cfg.scope ?? req.scope;
    let forceReauthorization = false;
    if (req.stepUp && this.cfg.scope === undefined) {
      scope = computeScopeUnion(this.requested, tokens?.scope, req.scope);
      forceReauthorization = isStrictScopeSuperset(scope, tokens?.scope);
    }
    if (scope !== undefined) this.requested = computeScopeUnion(this.requested, scope);
    // A token the server refused may come from an authorization server it no longer trusts: discover again,
    // so a changed `authorization_servers` is seen and the stale registration and tokens are not reused (SEP-2352).
    if (req.sent !== undefined && !req.stepUp && !req.refreshOnly) await this.provider.invalidateCredentials('discovery');
    const options = { serverUrl: this.serverUrl, scope, resourceMetadataUrl: req.resourceMetadataUrl ?? this.resourceMetadataUrl, forceReauthorization, fetchFn: this.observedFetch };
    const started = Date.now();
    try {
      let result = await auth(this.provider, options);
      if (result === 'REDIRECT') {
        if (!callback) throw withReason(new BridgeError('BRIDGE_ERR_AUTH', 'the stored tokens cannot be refreshed; a new authorization is needed'), 'reauthorization_needed');
        const { code, iss } = await callback.wait(this.provider.flowState ?? '', this.cfg.timeoutMs);
        result = await auth(this.provider, { ...options, authorizationCode: code, iss });
      }
      if (result !== 'AUTHORIZED') throw new BridgeError('BRIDGE_ERR_AUTH', 'the authorization did not complete');
      this.log.info('oauth.authorized', { ms: Date.now() - started, grant: this.cfg.grant });
    } catch (err) {
      throw this.failure(err);
    } finally {
      await this.provider.invalidateCredentials('verifier');
      if (this.callback === callback) this.callback = undefined;
      await callback?.close();
    }
  }

  /**
   * No more flows: one waiting for a browser ends now and its callback port is
   * free again (a config server removed by SIGHUP, a daemon stopping). Tokens stay stored.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.callback?.close();
  }

  /**
   * The fetch `auth()` runs its exchanges through: the global one, with each
   * refresh_token grant (RFC 6749 §6) and how it ended told to the observer.
   * Counting at the token request sees the refreshes the SDK makes on its own
   * (a 401 with a refresh token stored), not only those asked for here.
   */
  private readonly observedFetch: FetchLike = async (url, init) => {
    const body = init?.body;
    const refresh = body instanceof URLSearchParams ? body.get('grant_type') === 'refresh_token' : typeof body === 'string' && /(^|&)grant_type=refresh_token(&|$)/.test(body);
    if (!refresh || !this.observer) return fetch(url, init);
    let res: Response;
    try {
      res = await fetch(url, init);
    } catch (err) {
      this.observer.refreshed('error');
      throw err;
    }
    this.observer.refreshed(res.ok ? 'ok' : 'rejected');
    return res;
  };

  /** A BRIDGE_ERR_AUTH naming the OAuth error and what to do; never a token or the client secret. */
  private failure(err: unknown): BridgeError {
    if (err instanceof BridgeError) return err;
    const code = (err as { code?: unknown }).code;
    const oauthCode = typeof code === 'string' && /^[a-z_]+$/.test(code) ? code : undefined;
    let text = err instanceof Error ? err.message : String(err);
    if (this.cfg.clientSecret) text = text.split(this.cfg.clientSecret).join('[redacted]');
    // A config file's server (commandTarget set) is given its client and scope in its "oauth" object, not by flags.
    const inConfig = this.cfg.commandTarget !== undefined;
    const hint =
      oauthCode === 'invalid_client' || oauthCode === 'unauthorized_client'
        ? inConfig ? 'check "clientId" and "clientSecret" in this server\'s "oauth"' : 'check --oauth-client-id and --oauth-client-secret'
        : oauthCode === 'invalid_scope'
          ? inConfig ? 'check "scope" in this server\'s "oauth"' : 'check --oauth-scope'
          : `run mcp-bridge login ${this.cfg.commandTarget ?? this.upstream} (mcp-bridge logout ${this.cfg.commandTarget ?? this.upstream} starts afresh)`;
    return new BridgeError('BRIDGE_ERR_AUTH', `OAuth toward ${this.serverUrl.origin} failed${oauthCode ? ` (${oauthCode})` : ''}: ${text}; ${hint}`, { cause: err });
  }
}
