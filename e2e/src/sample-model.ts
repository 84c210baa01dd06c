import assert from 'node:assert/strict';
import { dataClient } from './clients.ts';

/** Two EUR equity ETFs and an EUR bond ETF. */
export type SampleModel = { equity: string[]; bonds: string[] };

/**
 * ETFs of the sample universe priced in EUR, for the model portfolio of a test's policy (the optimizer prices orders
 * in the base currency): two of the equity class, one of fixed income, read through the data interface.
 */
export async function eurEtfModel(dataUrl: string, tenant: { tenantId: string; apiKey: string }): Promise<SampleModel> {
  const reference = await dataClient(dataUrl, tenant.tenantId, tenant.apiKey).GET('/data/reference/universe/', {
    params: { query: { universe_name: 'GLOBAL', fields: ['INSTRUMENT_TYPE', 'ASSET_CLASS', 'CURRENCY', 'PRICE'] } },
  });
  assert.equal(reference.response.status, 200);
  const etfs = Object.entries((reference.data as { data: Record<string, Record<string, unknown>> }).data).filter(
    ([, f]) => f.instrument_type === 'ETF' && f.currency === 'EUR' && typeof f.price === 'number',
  );
  const of = (assetClass: string) => etfs.filter(([, f]) => f.asset_class === assetClass).map(([isin]) => isin);
  const model = { equity: of('EQUITY').slice(0, 2), bonds: of('FIXED_INCOME').slice(0, 1) };
  assert.equal(model.equity.length, 2, 'two EUR equity ETFs in the sample');
  assert.equal(model.bonds.length, 1, 'an EUR bond ETF in the sample');
  return model;
}
