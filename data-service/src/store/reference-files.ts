import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { applySchema } from './schema.ts';

const FILE = /^reference-(\d{8}T\d{6}\d{3}Z)\.duckdb$/;

/** The newest published reference file of the directory (by the version in its name), if any. */
export async function newestReferenceFile(dir: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const newest = names
    .filter((n) => FILE.test(n))
    .sort()
    .at(-1);
  return newest ? join(dir, newest) : undefined;
}

/** A version that sorts by time: 20261122T051500123Z. */
export const newVersion = (now = new Date()) => now.toISOString().replace(/[-:.]/g, '');

/**
 * Builds a new reference file: the reference schema, `fill` loading the data, the meta row. It is
 * written under a temporary name and renamed into place only when complete, so a replica never
 * attaches half a file. Returns the published path.
 */
export async function buildReferenceFile(dir: string, source: string, fill: (conn: DuckDBConnection) => Promise<unknown>): Promise<string> {
  await mkdir(dir, { recursive: true });
  const version = newVersion();
  const building = join(dir, `.building-${version}.duckdb`);
  const instance = await DuckDBInstance.create(building, { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const conn = await instance.connect();
  try {
    await applySchema(conn, 'reference');
    await fill(conn);
    await conn.run('insert into reference_meta values ($1, now(), $2)', [version, source]);
    await conn.run('checkpoint');
  } catch (error) {
    conn.closeSync();
    instance.closeSync();
    await rm(building, { force: true });
    await rm(`${building}.wal`, { force: true });
    throw error;
  }
  conn.closeSync();
  instance.closeSync();
  const published = join(dir, `reference-${version}.duckdb`);
  await rename(building, published);
  return published;
}
