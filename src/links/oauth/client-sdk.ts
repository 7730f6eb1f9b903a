/**
 * The SDK v2 client package, loaded on first use. It is the OAuth machinery
 * (`auth()`, discovery, private_key_jwt) and with zod its largest import: a
 * bridge whose upstream never asks for authorization, and every `--stdio`
 * start a desktop client makes, need not pay ~0.3 s of CPU to load it.
 */
type ClientSdk = typeof import('@modelcontextprotocol/client');

let loading: Promise<ClientSdk> | undefined;

export function clientSdk(): Promise<ClientSdk> {
  return (loading ??= import('@modelcontextprotocol/client'));
}
