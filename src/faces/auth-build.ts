import type { ClientAuthConfig } from '../identity/client-auth-config.js';
import { BearerAuth } from './auth.js';
import { JwtAuth } from './auth-jwt.js';
import { PassThroughAuth } from './auth-pass-through.js';
import type { ClientAuth } from './auth-verdict.js';

/**
 * The face's client authentication for the daemon's options: JWT or
 * pass-through when configured, else the static token, else none.
 * `upstreamUrlFor` names the upstream a pass-through resource path belongs to.
 */
export function buildClientAuth(config: ClientAuthConfig | undefined, authToken: string | undefined, upstreamUrlFor: (resourcePath: string) => string | undefined): ClientAuth | undefined {
  if (config?.mode === 'jwt') {
    return new JwtAuth({
      issuer: config.issuer,
      audience: config.audience,
      jwksUrl: config.jwksUrl,
      requiredScopes: config.requiredScopes,
      introspection: config.introspectionUrl === undefined ? undefined : {
        url: config.introspectionUrl,
        clientId: config.introspectionClientId,
        clientSecret: config.introspectionClientSecret,
        issuer: config.issuer,
        audience: config.audience,
      },
    });
  }
  if (config?.mode === 'pass-through') return new PassThroughAuth({ upstreamUrlFor, forwardHeaders: config.forwardHeaders });
  return authToken === undefined ? undefined : new BearerAuth(authToken);
}
