import assert from 'node:assert/strict';
import type { components } from '@platform/api-types/data';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient } from '../../src/clients.ts';
import { contractShapes, type ClientResult, type ContractShapes } from '../../src/contract-shapes.ts';

// What the data interface's end-to-end tests share: a platform with the sample universe, a tenant's
// client, the contract's fields and factors, every universe as listed, and the calls they check.

export type Client = ReturnType<typeof dataClient>;
export type ReferenceRecord = components['schemas']['ReferenceRecord'];
export type ReferenceData = components['schemas']['ReferenceDataResponse'];
export type SearchRequest = components['schemas']['SmartSearchRequest'];
export type Stars = Record<string, Record<string, number | null>>;

export const ARROW_TYPES = ['application/vnd.apache.arrow.stream', 'application/octet-stream'] as const;
export const UNIVERSES = ['GLOBAL', 'DEFAULT', 'ROBO'] as const;
/** Matches the contract's ISIN pattern; the sample universe has no instrument in country ZZ. */
export const UNKNOWN_ISIN = 'ZZ0000000000';

export const sorted = (values: Iterable<string>) => [...values].sort();
/** An Arrow cell as the JSON answer writes it: a Date32 (a Date or epoch milliseconds) as YYYY-MM-DD. */
export const jsonOf = (value: unknown, type: string): unknown => {
  if (value === null || value === undefined) return null;
  if (type.startsWith('Date')) return new Date(value instanceof Date ? value.getTime() : Number(value)).toISOString().slice(0, 10);
  return value;
};
/** The order the contract gives smart search: by each key, descending unless ascending, nulls last; ties by ISIN. */
export const searchOrder = (keys: ((isin: string) => number | null)[], ascending: boolean) => (a: string, b: string) => {
  for (const key of keys) {
    const [x, y] = [key(a), key(b)];
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return ascending ? x - y : y - x;
  }
  return a < b ? -1 : a > b ? 1 : 0;
};

export type SampleData = Awaited<ReturnType<typeof openSampleData>>;

/** Starts a platform and reads the sample universe through a new tenant's client; `platform.stop()` ends it. */
export async function openSampleData() {
  const [platform, shapes] = await Promise.all([startTestPlatform(), contractShapes('data')]);
  try {
    return await readSample(platform, shapes);
  } catch (error) {
    await platform.stop();
    throw error;
  }
}

async function readSample(platform: TestPlatform, shapes: ContractShapes) {
  const newClient = async () => {
    const tenant = await platform.tenant();
    return dataClient(platform.dataUrl, tenant.tenantId, tenant.apiKey);
  };
  const client: Client = await newClient();
  const fields = shapes.schema('ReferenceField').enum as string[];
  const factors = shapes.schema('XrayFactor').enum as string[];
  const xray = async (
    query: { universe_name: string; normalization_universe?: string; instrument_universe?: string; group_split_type?: components['schemas']['GroupSplitType'] },
    c = client,
  ) => {
    const result = await c.GET('/xray/universe/', { params: { query: { fields: factors, ...query } } });
    return shapes.ok('/xray/universe/', 'get', result)[0]!.data as Stars;
  };
  /** A JSON reference answer, checked (its generated type also admits the Arrow representation). */
  const reference = (result: ClientResult, path: '/data/reference/query/' | '/data/reference/universe/' = '/data/reference/query/') =>
    shapes.ok(path, path === '/data/reference/query/' ? 'post' : 'get', result) as ReferenceData;
  const search = async (body: SearchRequest, c = client) => shapes.ok('/smart-search/', 'post', await c.POST('/smart-search/', { body })).data;

  const universes: Record<string, string[]> = {};
  /** GLOBAL with every reference field, as the universe listing answers it. */
  let global: Record<string, ReferenceRecord> = {};
  for (const name of UNIVERSES) {
    const result = await client.GET('/data/reference/universe/', { params: { query: { universe_name: name, fields } } });
    const body = reference(result, '/data/reference/universe/');
    universes[name] = sorted(Object.keys(body.data));
    if (name === 'GLOBAL') global = body.data;
  }
  const first = (type: string) => universes.GLOBAL!.find((isin) => global[isin]!.instrument_type === type && global[isin]!.price !== null)!;
  /** One stock, one bond and one ETF of the sample, and an ISIN the sample does not have. */
  const picks = [first('STOCK'), first('BOND'), first('ETF'), UNKNOWN_ISIN];
  assert.ok(picks.every(Boolean) && !(UNKNOWN_ISIN in global), `sample picks: ${picks}`);
  return { platform, shapes, client, fields, factors, global, universes, picks, newClient, xray, reference, search };
}
