/** Where one Patroni node listens and keeps its data; all on loopback. */
export type PatroniNodeSpec = { name: string; pgPort: number; restPort: number; dataDir: string; socketDir: string; pgpass: string };

export type PatroniCluster = {
  scope: string;
  etcdClientPort: number;
  binDir: string;
  superuserPassword: string;
  replicationPassword: string;
  /** Seconds the leader key lives without renewal: how long a silent primary keeps its role. */
  ttl: number;
  loopWait: number;
  retryTimeout: number;
};

export const REPLICATION_USER = 'replicator';
export const SUPERUSER = 'postgres';

/**
 * One node's patroni.yml. JSON is YAML, so the object is written as JSON: no YAML library, and no
 * quoting of passwords to get wrong.
 */
export function patroniConfig(cluster: PatroniCluster, node: PatroniNodeSpec): object {
  const loopback = (port: number) => `127.0.0.1:${port}`;
  return {
    scope: cluster.scope,
    name: node.name,
    log: { level: 'INFO' },
    restapi: { listen: loopback(node.restPort), connect_address: loopback(node.restPort) },
    // etcd's v2 API, not etcd3: Debian's Patroni 3.0 renews the leader key through etcd3 with an
    // unconditional put, so a primary that wakes after its key expired takes the key back from
    // the node promoted meanwhile (two primaries, the newer one demoted and its timeline lost).
    // Through v2 the renewal is a compare-and-swap on its own name, which then fails.
    etcd: { host: loopback(cluster.etcdClientPort) },
    bootstrap: {
      dcs: {
        ttl: cluster.ttl,
        loop_wait: cluster.loopWait,
        retry_timeout: cluster.retryTimeout,
        // A standby that is not the synchronous one is never promoted, so no acknowledged commit is
        // lost to a failover; not strict, so that the primary left alone after one still takes writes.
        synchronous_mode: true,
        synchronous_mode_strict: false,
        maximum_lag_on_failover: 1_048_576,
        postgresql: {
          use_pg_rewind: true,
          remove_data_directory_on_rewind_failure: true,
          use_slots: true,
          parameters: { wal_log_hints: 'on', max_wal_senders: 10, max_replication_slots: 10, hot_standby: 'on', wal_keep_size: '128MB' },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, 'data-checksums'],
    },
    postgresql: {
      listen: loopback(node.pgPort),
      connect_address: loopback(node.pgPort),
      data_dir: node.dataDir,
      bin_dir: cluster.binDir,
      pgpass: node.pgpass,
      authentication: {
        superuser: { username: SUPERUSER, password: cluster.superuserPassword },
        replication: { username: REPLICATION_USER, password: cluster.replicationPassword },
      },
      parameters: { unix_socket_directories: node.socketDir, max_connections: 300, password_encryption: 'scram-sha-256' },
      pg_hba: ['local all all peer', `host replication ${REPLICATION_USER} 127.0.0.1/32 scram-sha-256`, 'host all all 127.0.0.1/32 scram-sha-256'],
    },
  };
}

/** The arguments of a single-member etcd on loopback, its data in `dataDir`. */
export function etcdArgs(options: { name: string; clientPort: number; peerPort: number; dataDir: string }): string[] {
  const client = `http://127.0.0.1:${options.clientPort}`;
  const peer = `http://127.0.0.1:${options.peerPort}`;
  return [
    '--name',
    options.name,
    '--data-dir',
    options.dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `${options.name}=${peer}`,
    '--initial-cluster-state',
    'new',
    '--log-level',
    'warn',
    // Patroni's etcd client speaks the v2 API (see patroniConfig).
    '--enable-v2=true',
  ];
}
