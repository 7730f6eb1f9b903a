import { MIN_CLUSTER_SECRET_BYTES } from '../cluster/cluster-keys.js';
import { normalizePeerUrl } from '../cluster/peer-set.js';
import { BridgeError } from '../errors.js';
import { DEFAULT_CLUSTER_HANDOFF_MS, type ClusterConfig } from './options.js';

const usage = (message: string) => new BridgeError('BRIDGE_ERR_USAGE', message);

interface ClusterFlags {
  clusterSelf?: string;
  clusterPeers?: string;
  clusterDns?: string;
  clusterSecret?: string;
  clusterHandoff?: string;
}

/**
 * `--cluster-self`, `--cluster-peers` | `--cluster-dns`, `--cluster-secret`
 * (or MCP_BRIDGE_CLUSTER_SECRET): all or none, checked at start with a message
 * that says what to do. None: the bridge stands alone, as before.
 */
export function clusterFrom(flags: ClusterFlags, env: NodeJS.ProcessEnv, ctx: { stdio: boolean; requestStateKey?: string }): ClusterConfig | undefined {
  const secret = flags.clusterSecret ?? (env.MCP_BRIDGE_CLUSTER_SECRET || undefined);
  const any = flags.clusterSelf ?? flags.clusterPeers ?? flags.clusterDns ?? flags.clusterSecret ?? flags.clusterHandoff;
  if (any === undefined) return undefined;
  if (flags.clusterSelf === undefined) throw usage('--cluster-peers, --cluster-dns and --cluster-secret need --cluster-self <url>: how the other replicas reach this one');
  if (ctx.stdio) throw usage('--cluster-* joins replicas behind an HTTP load balancer; with --stdio there is one client, so leave them out');
  if ((flags.clusterPeers === undefined) === (flags.clusterDns === undefined)) throw usage('give exactly one of --cluster-peers <url,...> or --cluster-dns <name> with --cluster-self');
  if (secret === undefined || Buffer.byteLength(secret) < MIN_CLUSTER_SECRET_BYTES) {
    throw usage(`a cluster needs --cluster-secret (or MCP_BRIDGE_CLUSTER_SECRET) of at least ${MIN_CLUSTER_SECRET_BYTES} bytes, the same on every replica (for instance: openssl rand -hex 32)`);
  }
  if (ctx.requestStateKey !== undefined) throw usage('leave --request-state-key out in a cluster: the cluster secret derives the requestState key every replica shares');
  const url = (raw: string, flag: string) => {
    try {
      return normalizePeerUrl(raw);
    } catch {
      throw usage(`${flag} must be an http(s) base URL such as http://10.0.0.5:8808 (got '${raw}')`);
    }
  };
  const self = url(flags.clusterSelf, '--cluster-self');
  const peers = flags.clusterPeers?.split(',').map((p) => p.trim()).filter((p) => p !== '').map((p) => url(p, '--cluster-peers'));
  if (peers !== undefined && peers.length === 0) throw usage('--cluster-peers must name at least one base URL');
  if (flags.clusterDns !== undefined && !/^[A-Za-z0-9.-]+$/.test(flags.clusterDns)) throw usage(`--cluster-dns must be a DNS name such as mcp-bridge-peers.default.svc.cluster.local (got '${flags.clusterDns}')`);
  const handoffMs = flags.clusterHandoff === undefined ? DEFAULT_CLUSTER_HANDOFF_MS : Number(flags.clusterHandoff);
  if (!Number.isInteger(handoffMs) || handoffMs < 0) throw usage(`--cluster-handoff must be a whole number ≥ 0 (got '${flags.clusterHandoff}')`);
  return { self, secret, handoffMs, ...(peers ? { peers } : {}), ...(flags.clusterDns ? { dns: flags.clusterDns } : {}) };
}
