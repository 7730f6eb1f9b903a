import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log.js';
import type { OAuthConfig } from './oauth-config.js';
import { listRecords, upstreamKey, type UpstreamRecord } from './token-store.js';
import { UpstreamOAuth } from './upstream-oauth.js';

/** `mcp-bridge login <url>`: runs the flow now and resolves once tokens are stored. */
export async function loginCommand(url: string, cfg: OAuthConfig, logger: Logger): Promise<string> {
  const oauth = new UpstreamOAuth(url, cfg, logger);
  await oauth.login();
  return `mcp-bridge: authorized toward ${url}; tokens stored in ${oauth.store.file}`;
}

/** `mcp-bridge logout <url>`: removes what is stored for that upstream (every client id and resource it was used with). */
export async function logoutCommand(url: string, dir: string): Promise<string> {
  const records = (await listRecords(dir)).filter((r) => r.upstream === url);
  for (const r of records) await rm(path.join(dir, `${upstreamKey(r.upstream, r.resource, r.clientId)}.json`), { force: true });
  return records.length === 0 ? `mcp-bridge: nothing stored for ${url}` : `mcp-bridge: removed the tokens and registration of ${url}`;
}

/** `mcp-bridge auth status`: one line per upstream with stored tokens: scopes and expiry, never a token. */
export async function authStatusCommand(dir: string, now = Date.now()): Promise<string> {
  const rows = (await listRecords(dir)).filter((r) => r.tokens?.access_token);
  if (rows.length === 0) return `mcp-bridge: no stored tokens in ${dir}`;
  return rows.map((r) => statusLine(r, now)).join('\n');
}

/** One record with tokens as `auth status` shows it: upstream, scopes, expiry, whether refreshable, client; never a token. */
export function statusLine(r: UpstreamRecord, now = Date.now()): string {
  const t = r.tokens!;
  const expiry = t.expires_at === undefined ? 'no expiry given' : t.expires_at <= now ? `expired ${new Date(t.expires_at).toISOString()}` : `expires ${new Date(t.expires_at).toISOString()}`;
  const parts = [r.upstream, `scope: ${t.scope || '(none)'}`, expiry, t.refresh_token ? 'refreshable' : 'not refreshable'];
  if (r.clientId ?? r.client?.client_id) parts.push(`client: ${r.clientId ?? r.client?.client_id}`);
  return parts.join('  ');
}
