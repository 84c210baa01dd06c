// The DuckDB store: the one instance, its connections, schema application and the attached reference file.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { newestReferenceFile } from './reference-files.ts';
import { applySchema } from './schema.ts';

/** What a request works with: a connection of its own and the alias of the reference data it reads. */
export type DuckSession = {
  conn: DuckDBConnection;
  /** SQL name of the attached reference database, e.g. `ref_3`: write `${ref}.instruments`. */
  ref: string;
  /** Version of that reference data (part of cache keys). */
  version: string;
};

export type DuckStore = {
  /** Runs `work` on a pooled connection against the current reference data. */
  use: <T>(work: (session: DuckSession) => Promise<T>) => Promise<T>;
  /** Attaches the newest reference file of the directory when it is not the current one; true when it switched. */
  reload: () => Promise<boolean>;
  close: () => Promise<void>;
};

export type DuckStoreOptions = {
  /** The replica's own database file (tenant data). */
  path: string;
  /** Directory of reference files (`reference-<version>.duckdb`); the newest is attached. */
  referenceDir: string;
  connections?: number;
};

/**
 * Opens (or creates) the replica's database, applies its numbered schema, and attaches the newest
 * reference file read-only. A newer reference file is attached beside the old one and requests
 * started after the switch read it; the old one is detached when its last request has finished,
 * so a reload never interrupts a request. Extensions are never downloaded (parquet, json and icu
 * are built in).
 */
export async function openDuckStore(options: DuckStoreOptions): Promise<DuckStore> {
  const instance = await DuckDBInstance.create(options.path, { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const idle: DuckDBConnection[] = [];
  for (let i = 0; i < (options.connections ?? 4); i++) idle.push(await instance.connect());
  await applySchema(idle[0]!, 'main');
  const waiting: ((conn: DuckDBConnection) => void)[] = [];
  const acquire = () => new Promise<DuckDBConnection>((resolve) => (idle.length > 0 ? resolve(idle.pop()!) : waiting.push(resolve)));
  const release = (conn: DuckDBConnection) => {
    const next = waiting.shift();
    if (next) next(conn);
    else idle.push(conn);
  };

  type Attached = { alias: string; file: string; version: string; users: number; retired: boolean };
  let current: Attached | undefined;
  let sequence = 0;

  const detachIfDone = async (a: Attached) => {
    if (!a.retired || a.users > 0) return;
    const conn = await acquire();
    try {
      await conn.run(`detach database if exists ${a.alias}`);
    } finally {
      release(conn);
    }
  };

  const reload = async (): Promise<boolean> => {
    const file = await newestReferenceFile(options.referenceDir);
    if (!file || file === current?.file) return false;
    const alias = `ref_${++sequence}`;
    const conn = await acquire();
    let version: string;
    try {
      await conn.run(`attach '${file.replace(/'/g, "''")}' as ${alias} (read_only)`);
      const meta = (await conn.runAndReadAll(`select version from ${alias}.reference_meta limit 1`)).getRows();
      version = String(meta[0]?.[0] ?? alias);
    } finally {
      release(conn);
    }
    const old = current;
    current = { alias, file, version, users: 0, retired: false };
    if (old) {
      old.retired = true;
      await detachIfDone(old);
    }
    return true;
  };

  await reload();
  if (!current) throw new Error(`No reference data in ${options.referenceDir}: run \`npm run cli -- data sample\` or \`data ingest\`.`);

  return {
    use: async (work) => {
      const attached = current!;
      attached.users++;
      const conn = await acquire();
      try {
        return await work({ conn, ref: attached.alias, version: attached.version });
      } finally {
        release(conn);
        attached.users--;
        await detachIfDone(attached);
      }
    },
    reload,
    close: async () => {
      for (const conn of idle.splice(0)) conn.closeSync();
      instance.closeSync();
    },
  };
}

export async function duckAnswers(store: DuckStore): Promise<void> {
  await store.use(({ conn, ref }) => conn.run(`select count(*) from ${ref}.reference_meta`));
}
