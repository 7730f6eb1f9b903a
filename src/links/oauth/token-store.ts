import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';

/** Tokens as kept on disk: `expires_at` (ms since the epoch) is computed when they are saved, so a restart knows their age. */
export type KeptTokens = StoredOAuthTokens & { expires_at?: number };

/** Everything kept for one upstream. */
export interface UpstreamRecord {
  upstream: string;
  resource?: string;
  /** The `--oauth-client-id` the record was made with, if any. */
  clientId?: string;
  /** A dynamic registration or a metadata-document client id, as the SDK saved it. */
  client?: StoredOAuthClientInformation;
  tokens?: KeptTokens;
  discovery?: OAuthDiscoveryState;
  updatedAt?: string;
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** The file name of an upstream: a digest of URL, resource and client id, so two configurations never share tokens. */
export function upstreamKey(upstream: string, resource?: string, clientId?: string): string {
  return createHash('sha256').update([upstream, resource ?? '', clientId ?? ''].join('\n')).digest('hex').slice(0, 32);
}

/**
 * The tokens and registrations of one upstream in one JSON file under the
 * OAuth directory (0700), written whole to a temporary file (0600) and
 * renamed over the old one, so a reader never sees half a record.
 */
export class TokenStore {
  readonly file: string;
  readonly lockTarget: string;

  constructor(
    readonly dir: string,
    readonly identity: { upstream: string; resource?: string; clientId?: string },
  ) {
    const key = upstreamKey(identity.upstream, identity.resource, identity.clientId);
    this.file = path.join(dir, `${key}.json`);
    this.lockTarget = path.join(dir, `${key}.flow`);
  }

  /** The record as on disk now (another bridge may have written it). */
  async read(): Promise<UpstreamRecord> {
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as UpstreamRecord;
      if (parsed && typeof parsed === 'object' && parsed.upstream === this.identity.upstream) return parsed;
    } catch {
      // Absent or unreadable: nothing stored.
    }
    return { ...this.identity };
  }

  /** Reads, changes and writes the record. */
  async update(change: (r: UpstreamRecord) => void): Promise<UpstreamRecord> {
    const record = await this.read();
    change(record);
    record.updatedAt = new Date().toISOString();
    await ensureDir(this.dir);
    const tmp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(record, null, 2) + '\n', { mode: FILE_MODE });
    await rename(tmp, this.file);
    return record;
  }
}

/** Creates the directory 0700, and tightens it if it was there already. */
export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await chmod(dir, DIR_MODE);
}

/** Every record under `dir` (`mcp-bridge auth status`). */
export async function listRecords(dir: string): Promise<UpstreamRecord[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: UpstreamRecord[] = [];
  for (const name of names.filter((n) => /^[0-9a-f]{32}\.json$/.test(n)).sort()) {
    try {
      out.push(JSON.parse(await readFile(path.join(dir, name), 'utf8')) as UpstreamRecord);
    } catch {
      // A file being replaced, or not ours.
    }
  }
  return out;
}
