import assert from 'node:assert/strict';
import { etcdArgs, patroniConfig, type PatroniCluster, type PatroniNodeSpec } from '@platform/dev-stack/patroni-config';

const cluster: PatroniCluster = {
  scope: 'platform',
  etcdClientPort: 12_379,
  binDir: '/usr/lib/postgresql/15/bin',
  superuserPassword: 'su-secret',
  replicationPassword: 'repl-secret',
  ttl: 10,
  loopWait: 1,
  retryTimeout: 4,
};
const node: PatroniNodeSpec = { name: 'pg1', pgPort: 15_433, restPort: 18_009, dataDir: '/w/pg1/data', socketDir: '/w/pg1', pgpass: '/w/pg1/pgpass' };

type Config = {
  name: string;
  restapi: { listen: string };
  etcd?: { host: string };
  etcd3?: unknown;
  bootstrap: { dcs: Record<string, unknown> & { postgresql: Record<string, unknown> } };
  postgresql: { listen: string; bin_dir: string; data_dir: string; pg_hba: string[]; authentication: Record<string, { username: string; password: string }> };
};

describe('dev stack: Patroni and etcd settings', () => {
  const config = patroniConfig(cluster, node) as Config;

  it('promotes only the synchronous standby, and lets a primary that lost its standby take writes', () => {
    assert.equal(config.bootstrap.dcs.synchronous_mode, true);
    assert.equal(config.bootstrap.dcs.synchronous_mode_strict, false);
    assert.deepEqual([config.bootstrap.dcs.ttl, config.bootstrap.dcs.loop_wait, config.bootstrap.dcs.retry_timeout], [10, 1, 4]);
  });

  it('rewinds a node that rejoins, copying it again when the rewind fails', () => {
    assert.equal(config.bootstrap.dcs.postgresql.use_pg_rewind, true);
    assert.equal(config.bootstrap.dcs.postgresql.remove_data_directory_on_rewind_failure, true);
    assert.equal((config.bootstrap.dcs.postgresql.parameters as Record<string, unknown>).wal_log_hints, 'on');
  });

  it("keeps the leader key through etcd's v2 API, whose renewal compares the holder's name", () => {
    assert.deepEqual(config.etcd, { host: '127.0.0.1:12379' });
    assert.equal(config.etcd3, undefined);
    assert.ok(etcdArgs({ name: 'e', clientPort: 1, peerPort: 2, dataDir: '/d' }).includes('--enable-v2=true'));
  });

  it('listens on loopback only and admits passwords from 127.0.0.1 only, on the Debian PostgreSQL 15 binaries', () => {
    assert.equal(config.restapi.listen, '127.0.0.1:18009');
    assert.equal(config.postgresql.listen, '127.0.0.1:15433');
    assert.equal(config.postgresql.bin_dir, '/usr/lib/postgresql/15/bin');
    assert.equal(config.postgresql.data_dir, '/w/pg1/data');
    for (const line of config.postgresql.pg_hba.filter((l) => l.startsWith('host'))) assert.match(line, / 127\.0\.0\.1\/32 scram-sha-256$/, line);
    assert.deepEqual(config.postgresql.authentication.replication, { username: 'replicator', password: 'repl-secret' });
    const args = etcdArgs({ name: 'etcd0', clientPort: 12_379, peerPort: 12_380, dataDir: '/w/etcd' });
    const urls = args.filter((a) => a.includes('://'));
    assert.equal(urls.length, 5);
    for (const url of urls) assert.match(url, /(^|=)http:\/\/127\.0\.0\.1:123(79|80)$/);
  });
});
