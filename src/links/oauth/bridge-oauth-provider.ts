import { createPrivateKey, randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { BRIDGE_VERSION } from '../../version.js';
import { clientSdk } from './client-sdk.js';
import type { OAuthConfig } from './oauth-config.js';
import type { KeptTokens, TokenStore } from './token-store.js';

/** The JWS algorithm that fits a PEM private key (RFC 7518 §3.1). */
export function algorithmOf(pem: string): string {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType === 'ec') return ({ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' } as Record<string, string>)[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? 'ES256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'rsa-pss') return 'PS256';
  return 'RS256';
}

/**
 * The bridge's OAuthClientProvider: the SDK's `auth()` runs the protocol, this
 * keeps what it hands over. Registrations and tokens live in the TokenStore
 * (shared with other bridges for the same upstream); the code verifier, the
 * state and the discovery state live in this process only, one flow at a time.
 */
export class BridgeOAuthProvider implements OAuthClientProvider {
  /** The loopback callback of the flow in progress; set by the caller before `auth()`. */
  redirectTarget: string | undefined;
  /** The `state` sent with the last authorization request. */
  flowState: string | undefined;
  readonly addClientAuthentication?: AddClientAuthentication;
  /** `--oauth-resource` pins the RFC 8707 resource; otherwise the SDK checks the metadata's against the URL. */
  readonly validateResourceURL?: (serverUrl: string | URL, resource?: string) => Promise<URL | undefined>;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly store: TokenStore,
    private readonly cfg: OAuthConfig,
    private readonly onRedirect: (url: URL) => void,
  ) {
    const pinned = cfg.resource;
    if (pinned !== undefined) this.validateResourceURL = async () => new URL(pinned);
    if (cfg.privateKeyPem !== undefined && cfg.clientId !== undefined) {
      // RFC 7523 §3: the client is both issuer and subject of its assertion.
      const assertion = { issuer: cfg.clientId, subject: cfg.clientId, privateKey: cfg.privateKeyPem, alg: algorithmOf(cfg.privateKeyPem) };
      let sign: AddClientAuthentication | undefined;
      this.addClientAuthentication = async (...args) => (sign ??= (await clientSdk()).createPrivateKeyJwtAuth(assertion))(...args);
    }
  }

  private get interactive(): boolean {
    return this.cfg.grant === 'authorization_code';
  }

  get redirectUrl(): string | undefined {
    return this.interactive ? this.redirectTarget : undefined;
  }

  get clientMetadataUrl(): string | undefined {
    return this.cfg.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const method = this.cfg.privateKeyPem !== undefined ? 'private_key_jwt' : this.cfg.clientSecret !== undefined ? 'client_secret_basic' : 'none';
    const common = { client_name: 'mcp-bridge', software_id: 'mcp-bridge', software_version: BRIDGE_VERSION, token_endpoint_auth_method: method };
    if (!this.interactive) return { ...common, redirect_uris: [], grant_types: ['client_credentials'] };
    return { ...common, redirect_uris: this.redirectTarget ? [this.redirectTarget] : [], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }

  state(): string {
    this.flowState = randomBytes(16).toString('base64url');
    return this.flowState;
  }

  async clientInformation(): Promise<StoredOAuthClientInformation | undefined> {
    if (this.cfg.clientId !== undefined) {
      return this.cfg.clientSecret === undefined ? { client_id: this.cfg.clientId } : { client_id: this.cfg.clientId, client_secret: this.cfg.clientSecret };
    }
    const client = (await this.store.read()).client;
    if (!client) return undefined;
    // A registration made for another callback port cannot finish a flow here (the redirect URI would not match): register afresh.
    const uris = (client as { redirect_uris?: string[] }).redirect_uris;
    if (this.interactive && this.redirectTarget && client.client_id !== this.cfg.clientMetadataUrl && Array.isArray(uris) && !uris.includes(this.redirectTarget)) return undefined;
    return client;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    if (this.cfg.clientId !== undefined) return;
    await this.store.update((r) => (r.client = info));
  }

  async tokens(): Promise<KeptTokens | undefined> {
    return (await this.store.read()).tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const kept: KeptTokens = { ...tokens };
    if (typeof tokens.expires_in === 'number') kept.expires_at = Date.now() + tokens.expires_in * 1000;
    await this.store.update((r) => (r.tokens = kept));
  }

  redirectToAuthorization(url: URL): void {
    this.onRedirect(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no authorization flow is in progress');
    return this.verifier;
  }

  /** client_credentials asks for its token directly (SEP-1046); the authorization code grant uses the SDK's default. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.interactive) return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'all') this.verifier = undefined;
    if (scope === 'discovery' || scope === 'all') this.discovery = undefined;
    if (scope === 'verifier' || scope === 'discovery') return;
    await this.store.update((r) => {
      if (scope === 'tokens' || scope === 'all') delete r.tokens;
      if (scope === 'client' || scope === 'all') delete r.client;
    });
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

}
